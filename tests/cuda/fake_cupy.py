"""A stand-in for CuPy on top of NumPy, so that ember's CUDA plumbing runs in tests on a
machine without a GPU.

Its arrays are a NumPy subclass (``ndarray``), so ember's backend registry sees a distinct
array class for ``cuda``. Like CuPy, they refuse to mix with NumPy arrays in ufuncs and array
functions (TypeError), return 0-d arrays instead of scalars, have no ``__array_interface__``,
report ``.device.id`` and copy to the host with ``.get()``. Streams and events run nothing
asynchronously; the memory pool counts the bytes of the arrays it made.

``install()`` puts it in ``sys.modules['cupy']`` and makes ember look for CuPy again;
``uninstall()`` undoes both. Never used outside tests.
"""
import sys
import time
import types
import weakref

import numpy as np

__version__ = "fake (NumPy " + np.__version__ + ")"
_state = types.SimpleNamespace(device=0, device_count=1, stream=None, allocator=None)


def _refuse_host_arrays(values):
    for v in values:
        if isinstance(v, (list, tuple)):
            _refuse_host_arrays(v)
        elif isinstance(v, np.ndarray) and not isinstance(v, ndarray):
            raise TypeError(f"Unsupported type {type(v)}")


def _plain(v):
    if isinstance(v, ndarray):
        return v.view(np.ndarray)
    if isinstance(v, (list, tuple)):
        return type(v)(_plain(x) for x in v)
    return v


def _wrap(result):
    """NumPy results as device arrays (scalars as 0-d arrays, as CuPy gives them)."""
    if isinstance(result, ndarray):
        return result
    if isinstance(result, np.generic):
        result = np.asarray(result)
    if isinstance(result, np.ndarray):
        owns = result.base is None
        out = result.view(ndarray)
        if owns:
            out._mem = _allocate(result.nbytes)
        return out
    if isinstance(result, tuple):
        return tuple(_wrap(r) for r in result)
    if isinstance(result, list):
        return [_wrap(r) for r in result]
    return result


class ndarray(np.ndarray):
    """A 'device' array: NumPy memory that behaves like a CuPy array."""

    def __array_finalize__(self, obj):
        self._device_id = getattr(obj, "_device_id", _state.device)
        self._mem = getattr(obj, "_mem", None)

    @property
    def device(self):
        return Device(self._device_id)

    @property
    def data(self):
        return types.SimpleNamespace(ptr=np.ndarray.__array_interface__.__get__(self)["data"][0])

    @property
    def __array_interface__(self):
        raise AttributeError("'cupy.ndarray' object has no attribute '__array_interface__'")

    def get(self, stream=None, out=None):
        host = np.array(self.view(np.ndarray))
        if out is None:
            return host
        np.copyto(out, host)
        return out

    def set(self, array, stream=None):
        _refuse_device_arrays(array)
        self.view(np.ndarray)[...] = array

    def __getitem__(self, key):
        return _wrap(np.ndarray.__getitem__(self, _plain(key)))

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        _refuse_host_arrays(inputs)
        out = kwargs.get("out")
        if out is not None:
            kwargs["out"] = tuple(_plain(o) for o in out)
        result = getattr(ufunc, method)(*_plain(inputs), **kwargs)
        if method == "at":
            return None
        if out is not None:
            return out[0] if len(out) == 1 else out
        return _wrap(result)

    def __array_function__(self, func, types_, args, kwargs):
        _refuse_host_arrays(args)
        return _wrap(func(*_plain(args), **{k: _plain(v) for k, v in kwargs.items()}))


def _refuse_device_arrays(array):
    if isinstance(array, ndarray):
        raise TypeError("expected a host array")


# -- the module's array functions ------------------------------------------------------------

class _Forward(types.ModuleType):
    """Forwards attribute lookups to a NumPy module, wrapping functions' results."""

    def __init__(self, name, target):
        super().__init__(name)
        self._target = target

    def __getattr__(self, name):
        value = getattr(self._target, name)
        if isinstance(value, types.ModuleType):
            return _Forward(f"{self.__name__}.{name}", value)
        if callable(value) and not isinstance(value, (type, np.ufunc)):
            def call(*args, **kwargs):
                return _wrap(value(*args, **kwargs))
            call.__name__ = name
            return call
        return value


def asarray(obj, dtype=None, order=None):
    if isinstance(obj, ndarray):
        return obj if dtype is None else obj.astype(dtype, copy=False)
    return _wrap(np.array(obj, dtype=dtype, order=order or "K"))


def array(obj, dtype=None, copy=True, order="K", ndmin=0):
    return _wrap(np.array(_plain(obj), dtype=dtype, copy=copy, order=order, ndmin=ndmin))


def asnumpy(a, stream=None, out=None):
    return a.get(out=out) if isinstance(a, ndarray) else np.asarray(a)


def get_array_module(*args):
    return sys.modules[__name__] if any(isinstance(a, ndarray) for a in args) else np


def is_available():
    return True


# -- cupy.cuda ----------------------------------------------------------------------------------

class CUDARuntimeError(RuntimeError):
    pass


class Device:
    def __init__(self, device=None):
        self.id = _state.device if device is None else int(device)
        self._previous = []

    def use(self):
        if not 0 <= self.id < _state.device_count:
            raise CUDARuntimeError("cudaErrorInvalidDevice: invalid device ordinal")
        _state.device = self.id

    def synchronize(self):
        pass

    def __enter__(self):
        self._previous.append(_state.device)
        self.use()
        return self

    def __exit__(self, *exc):
        _state.device = self._previous.pop()


class Stream:
    _count = [0x1000]

    def __init__(self, null=False, non_blocking=False, ptds=False, priority=None):
        if null:
            self.ptr = 0
        else:
            Stream._count[0] += 0x10
            self.ptr = Stream._count[0]
        self.done = True
        self._previous = []
        self.waited = []

    def synchronize(self):
        pass

    def wait_event(self, event):
        self.waited.append(event)

    def record(self, event=None):
        event = Event() if event is None else event
        event.record(self)
        return event

    def use(self):
        _state.stream = self
        return self

    def __enter__(self):
        self._previous.append(get_current_stream())
        return self.use()

    def __exit__(self, *exc):
        self._previous.pop().use()


Stream.null = Stream(null=True)


def get_current_stream():
    return _state.stream or Stream.null


class Event:
    def __init__(self, block=False, disable_timing=False, interprocess=False):
        self.disable_timing = disable_timing
        self.time = None
        self.done = True

    def record(self, stream=None):
        self.time = time.perf_counter()

    def synchronize(self):
        pass


def get_elapsed_time(start, end):
    if start.disable_timing or end.disable_timing:
        raise CUDARuntimeError("cudaErrorInvalidResourceHandle: invalid resource handle")
    return (end.time - start.time) * 1000.0


class _MemoryPointer:
    def __init__(self, device_id, size):
        self.device_id, self.size = device_id, size


class MemoryPool:
    """Counts the bytes of live device arrays (used) and of blocks kept for reuse (total)."""

    def __init__(self):
        self.used = {}
        self.total = {}

    def malloc(self, size):
        size = -(-size // 512) * 512
        device = _state.device
        pointer = _MemoryPointer(device, size)
        self.used[device] = self.used.get(device, 0) + size
        self.total[device] = max(self.total.get(device, 0), self.used[device])
        weakref.finalize(pointer, self._free, device, size)
        return pointer

    def _free(self, device, size):
        self.used[device] -= size

    def used_bytes(self):
        return self.used.get(_state.device, 0)

    def total_bytes(self):
        return self.total.get(_state.device, 0)

    def free_all_blocks(self):
        self.total = dict(self.used)


_pool = MemoryPool()
_pinned_pool = types.SimpleNamespace(free_all_blocks=lambda: None)


def get_default_memory_pool():
    return _pool


def get_default_pinned_memory_pool():
    return _pinned_pool


def set_allocator(allocator=None):
    _state.allocator = allocator


def _allocate(nbytes):
    allocator = _state.allocator or _pool.malloc
    return allocator(nbytes)


def alloc_pinned_memory(size):
    return bytearray(size)


def _properties(index):
    return {"name": b"Fake CUDA GPU (NumPy)", "major": 9, "minor": 0, "totalGlobalMem": 2 ** 34,
            "multiProcessorCount": 4, "l2CacheSize": 2 ** 22}


def _check_index(index):
    if not 0 <= index < _state.device_count:
        raise CUDARuntimeError("cudaErrorInvalidDevice: invalid device ordinal")
    return index


runtime = types.SimpleNamespace(
    CUDARuntimeError=CUDARuntimeError,
    getDeviceCount=lambda: _state.device_count,
    getDevice=lambda: _state.device,
    getDeviceProperties=lambda i: _properties(_check_index(i)),
    deviceSynchronize=lambda: None,
    runtimeGetVersion=lambda: 13000,
)

cuda = types.SimpleNamespace(
    Device=Device, Stream=Stream, Event=Event, runtime=runtime, get_current_stream=get_current_stream,
    get_elapsed_time=get_elapsed_time, MemoryPool=MemoryPool, set_allocator=set_allocator,
    alloc_pinned_memory=alloc_pinned_memory,
)
random = types.SimpleNamespace(seed=lambda seed=None: None)


def __getattr__(name):
    """Everything else: NumPy's function of that name, returning device arrays."""
    return getattr(_numpy_forward, name)


_numpy_forward = _Forward("cupy", np)

# -- switching it on and off ---------------------------------------------------------------------

_saved = []


def install(device_count=1):
    """Make ``import cupy`` give this module and ember's CUDA backend load it."""
    from ember import _backend
    _saved.append(sys.modules.get("cupy"))
    _state.device, _state.device_count, _state.stream = 0, device_count, None
    sys.modules["cupy"] = sys.modules[__name__]
    _backend.reset_cuda()
    assert _backend.load_cuda() is not None


def uninstall():
    from ember import _backend
    previous = _saved.pop()
    if previous is None:
        sys.modules.pop("cupy", None)
    else:
        sys.modules["cupy"] = previous
    _backend.reset_cuda()
