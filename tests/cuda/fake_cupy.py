"""A stand-in for CuPy on top of NumPy, so that ember's CUDA plumbing and ops run in tests on
a machine without a GPU.

Its arrays (``ndarray``) wrap a NumPy array without being one, so they are as strict as CuPy's:
they refuse to mix with NumPy arrays in ufuncs, array functions and this module's functions
(TypeError), refuse implicit conversion (``np.asarray(a)`` raises CuPy's TypeError; ``.get()``
copies to the host), refuse ufuncs' ``where=`` (CuPy has none), return 0-d arrays instead of
scalars (an element read by integers is a 0-d view), have CuPy's three ``flags`` only (no
``writeable``), report ``.device.id`` and ``.data.ptr``. Like CuPy they accept NumPy arrays and
lists as indices and as values assigned into them through advanced indices, but not through basic
ones (CuPy's ``fill`` refuses them).
What CuPy 14 lacks, seen on a GPU, they lack too: ``initial=`` of ``max``/``min``, ``out=`` of
``einsum``, ufuncs' ``accumulate`` beyond add and multiply, ``at`` beyond add, subtract, maximum
and minimum (the last two not for float16), and special functions' float16 loops (their results
are float64).
``cupyx.scipy.special`` computes on the host with ember's own special functions.
Streams and events run nothing asynchronously; the memory pool counts the bytes of the arrays
it made.

``install()`` puts it in ``sys.modules['cupy']`` (and ``cupyx``) and makes ember look for CuPy
again; ``uninstall()`` undoes both. Never used outside tests.
"""
import operator
import sys
import time
import types
import weakref

import numpy as np

__version__ = "fake (NumPy " + np.__version__ + ")"
_state = types.SimpleNamespace(device=0, device_count=1, stream=None, allocator=None)
_IMPLICIT = ("Implicit conversion to a NumPy array is not allowed. Please use `.get()` to "
             "construct a NumPy array explicitly.")


def _refuse_host_arrays(values):
    for v in values:
        if isinstance(v, (list, tuple)):
            _refuse_host_arrays(v)
        elif isinstance(v, np.ndarray):
            raise TypeError(f"Unsupported type {type(v)}")


def _plain(v):
    """``v`` with every device array replaced by the NumPy array it wraps."""
    if v.__class__ is ndarray:
        return v._a
    if isinstance(v, (list, tuple)):
        return type(v)(_plain(x) for x in v)
    if isinstance(v, dict):
        return {k: _plain(x) for k, x in v.items()}
    return v


# -- memory: one allocation per NumPy buffer a device array looks into ----------------------------

_allocations = {}  # id(root NumPy array) -> the allocator's memory object
_owners = {}  # id(root NumPy array) -> weakref to the device array wrapping that root


def _root(a):
    while isinstance(a.base, np.ndarray):
        a = a.base
    return a


def _account(root):
    key = id(root)
    if key not in _allocations:
        _allocations[key] = _allocate(root.nbytes)
        weakref.finalize(root, _allocations.pop, key, None)


def _owner_of(root):
    """The device array wrapping ``root`` (made once, so ``.base`` keeps its identity while held)."""
    ref = _owners.get(id(root))
    owner = ref() if ref is not None else None
    if owner is None or owner._a is not root:
        owner = ndarray._of(root, None)
        key = id(root)
        _owners[key] = weakref.ref(owner, lambda _, key=key: _owners.pop(key, None))
    return owner


def _wrap(result):
    """NumPy results as device arrays (scalars as 0-d arrays, as CuPy gives them)."""
    if result.__class__ is ndarray:
        return result
    if isinstance(result, np.generic):
        result = np.asarray(result)
    if isinstance(result, np.ndarray):
        root = _root(result)
        _account(root)
        if root is result:
            return _owner_of(root)
        return ndarray._of(result, _owner_of(root))
    if isinstance(result, tuple):
        return tuple(_wrap(r) for r in result)
    if isinstance(result, list):
        return [_wrap(r) for r in result]
    return result


class Flags:
    """CuPy's array flags: contiguity and ownership only (CuPy arrays are always writable)."""

    def __init__(self, a):
        self.c_contiguous = a.flags.c_contiguous
        self.f_contiguous = a.flags.f_contiguous
        self.owndata = a.base is None

    def __getitem__(self, name):
        return {"C_CONTIGUOUS": self.c_contiguous, "F_CONTIGUOUS": self.f_contiguous,
                "OWNDATA": self.owndata}[name]


def _basic(key):
    """Whether an index is basic (integers, slices, None, Ellipsis: no arrays or lists)."""
    keys = key if isinstance(key, tuple) else (key,)
    return not any(isinstance(k, (list, np.ndarray, ndarray)) or (hasattr(k, "dtype") and k.ndim) for k in keys)


def _ufunc(fn, reflected=False):
    def method(self, other):
        return ndarray.__array_ufunc__(self, fn, "__call__", *((other, self) if reflected else (self, other)))
    return method


class ndarray:
    """A 'device' array: NumPy memory that behaves like a CuPy array."""

    __slots__ = ("_a", "_base", "_device_id", "__weakref__")
    __array_priority__ = 100

    def __init__(self, shape, dtype=float, memptr=None, strides=None, order="C"):
        out = _wrap(np.empty(shape, dtype=dtype, order=order))
        self._a, self._base, self._device_id = out._a, out._base, out._device_id

    @classmethod
    def _of(cls, a, base):
        self = object.__new__(cls)
        self._a, self._base = a, base
        self._device_id = base._device_id if base is not None else _state.device
        return self

    # -- what CuPy arrays have -----------------------------------------------------------------
    shape = property(lambda self: self._a.shape)
    dtype = property(lambda self: self._a.dtype)
    ndim = property(lambda self: self._a.ndim)
    size = property(lambda self: self._a.size)
    strides = property(lambda self: self._a.strides)
    itemsize = property(lambda self: self._a.itemsize)
    nbytes = property(lambda self: self._a.nbytes)
    flags = property(lambda self: Flags(self._a))
    base = property(lambda self: self._base)
    T = property(lambda self: _wrap(self._a.T))
    mT = property(lambda self: _wrap(self._a.mT))
    real = property(lambda self: _wrap(self._a.real))
    imag = property(lambda self: _wrap(self._a.imag))

    @property
    def device(self):
        return Device(self._device_id)

    @property
    def data(self):
        return types.SimpleNamespace(ptr=self._a.__array_interface__["data"][0])

    def __getattr__(self, name):
        """The NumPy array's method of that name, taking and giving device arrays."""
        if name.startswith("__") or name in ("ctypes", "flat", "tobytes", "tofile", "dump", "dumps"):
            raise AttributeError(f"'cupy.ndarray' object has no attribute '{name}'")
        value = getattr(self._a, name)
        if not callable(value):
            return _wrap(value)

        def call(*args, **kwargs):
            _refuse_host_arrays(args)
            _refuse_missing_keywords(name, kwargs)
            result = value(*_plain(args), **_plain(kwargs))
            return self if result is self._a else _wrap(result)
        return call

    def __array__(self, dtype=None, copy=None):
        raise TypeError(_IMPLICIT)

    def get(self, stream=None, out=None):
        host = np.array(self._a)
        if out is None:
            return host
        np.copyto(out, host)
        return out

    def set(self, array, stream=None):
        _refuse_device_arrays(array)
        self._a[...] = array

    def item(self):
        return self._a.item()

    def tolist(self):
        return self._a.tolist()

    def __len__(self):
        return len(self._a)

    def __iter__(self):
        if self.ndim == 0:
            raise TypeError("iteration over a 0-d array")
        return (self[i] for i in range(len(self._a)))

    def __bool__(self):
        return bool(self._a)

    def __int__(self):
        return int(self._a)

    def __float__(self):
        return float(self._a)

    def __complex__(self):
        return complex(self._a)

    def __index__(self):
        return operator.index(self._a)

    def __repr__(self):
        return repr(self._a)

    def __getitem__(self, key):
        key = _plain(key)
        keys = key if isinstance(key, tuple) else (key,)
        if len(keys) == self._a.ndim and all(isinstance(k, (int, np.integer)) for k in keys):
            key = keys + (Ellipsis,)   # as CuPy: an element is a 0-d view, not a copy
        return _wrap(self._a[key])

    def __setitem__(self, key, value):
        if isinstance(value, np.ndarray) and value.ndim and _basic(key):
            raise ValueError("non-scalar numpy.ndarray cannot be used for fill")
        self._a[_plain(key)] = _plain(value)

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        _refuse_host_arrays(inputs)
        _refuse_missing_ufunc_method(ufunc, method, inputs)
        if "where" in kwargs:
            raise TypeError(f"Wrong arguments {{'where': {kwargs['where']!r}}}")
        out = kwargs.get("out")
        if out is not None:
            out = out if isinstance(out, tuple) else (out,)
            _refuse_host_arrays(out)
            kwargs["out"] = tuple(_plain(o) for o in out)
        result = getattr(ufunc, method)(*_plain(inputs), **_plain(kwargs))
        if method == "at":
            return None
        if out is not None:
            return out[0] if len(out) == 1 else out
        return _wrap(result)

    def __array_function__(self, func, types_, args, kwargs):
        _refuse_host_arrays(args)
        _refuse_host_arrays(tuple(kwargs.values()))
        return _wrap(func(*_plain(args), **_plain(kwargs)))

    def __neg__(self):
        return np.negative(self)

    def __pos__(self):
        return np.positive(self)

    def __abs__(self):
        return np.absolute(self)

    def __invert__(self):
        return np.invert(self)

    def __matmul__(self, other):
        return np.matmul(self, other)

    def __rmatmul__(self, other):
        return np.matmul(other, self)

    __hash__ = None


for _name, _fn in [("add", np.add), ("sub", np.subtract), ("mul", np.multiply),
                   ("truediv", np.true_divide), ("floordiv", np.floor_divide), ("mod", np.remainder),
                   ("pow", np.power), ("and", np.bitwise_and), ("or", np.bitwise_or),
                   ("xor", np.bitwise_xor), ("lshift", np.left_shift), ("rshift", np.right_shift)]:
    setattr(ndarray, f"__{_name}__", _ufunc(_fn))
    setattr(ndarray, f"__r{_name}__", _ufunc(_fn, reflected=True))

    def _inplace(self, other, _fn=_fn):
        _fn(self, other, out=(self,))
        return self
    setattr(ndarray, f"__i{_name}__", _inplace)
for _name, _fn in [("eq", np.equal), ("ne", np.not_equal), ("lt", np.less), ("le", np.less_equal),
                   ("gt", np.greater), ("ge", np.greater_equal)]:
    setattr(ndarray, f"__{_name}__", _ufunc(_fn))


_UFUNC_METHODS = {"accumulate": ("add", "multiply"), "reduceat": ("add",),
                  "at": ("add", "subtract", "maximum", "minimum")}
_AT_DTYPES = {"maximum": "iILQfd", "minimum": "iILQfd"}  # cupyx.scatter_max/min's dtypes


def _refuse_missing_ufunc_method(ufunc, method, inputs):
    if method in _UFUNC_METHODS and ufunc.__name__ not in _UFUNC_METHODS[method]:
        raise NotImplementedError(f"`cupy_{ufunc.__name__}.{method}` is not supported yet")
    if method == "at" and inputs[0].dtype.char not in _AT_DTYPES.get(ufunc.__name__, inputs[0].dtype.char):
        raise TypeError(f"cupy.{ufunc.__name__}.at only supports int32, int64, float32, float64, uint32, "
                        "uint64 as data type")


def _refuse_missing_keywords(name, kwargs):
    if name in ("max", "min", "amax", "amin") and "initial" in kwargs:
        raise TypeError(f"{name}() got an unexpected keyword argument 'initial'")
    if name == "einsum" and "out" in kwargs:
        raise TypeError("Did not understand the following kwargs: ['out']")


def _refuse_device_arrays(array):
    if isinstance(array, ndarray):
        raise TypeError("expected a host array")


# -- the module's array functions ------------------------------------------------------------

class _Forward(types.ModuleType):
    """Forwards attribute lookups to a NumPy module: its functions take device arrays (never
    NumPy arrays, as CuPy's refuse them) and give device arrays."""

    def __init__(self, name, target):
        super().__init__(name)
        self._target = target

    def __getattr__(self, name):
        value = getattr(self._target, name)
        if isinstance(value, types.ModuleType):
            return _Forward(f"{self.__name__}.{name}", value)
        if callable(value) and not isinstance(value, (type, np.ufunc)):
            def call(*args, **kwargs):
                _refuse_host_arrays(args)
                _refuse_host_arrays(tuple(kwargs.values()))
                _refuse_missing_keywords(name, kwargs)
                return _wrap(value(*_plain(args), **_plain(kwargs)))
            call.__name__ = name
            return call
        return value


def asarray(obj, dtype=None, order=None):
    if isinstance(obj, ndarray):
        return obj if dtype is None else obj.astype(dtype, copy=False)
    return _wrap(np.array(_plain(obj), dtype=dtype, order=order or "K"))


def array(obj, dtype=None, copy=True, order="K", ndmin=0):
    return _wrap(np.array(_plain(obj), dtype=dtype, copy=True, order=order, ndmin=ndmin))


def asnumpy(a, stream=None, out=None):
    return a.get(out=out) if isinstance(a, ndarray) else np.asarray(_plain(a))


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


# -- cupyx.scipy.special: ember's host special functions, on copies of the device arrays ----------

_SPECIAL_NAMES = {"gammaln": "lgamma"}  # CuPy's (SciPy's) name -> ember's _backend.special name
# CuPy's names that ember's other host kernel modules hold
_SPECIAL_MODULES = {"erfcx": "special_normal", "ndtri": "special_normal",
                    "log_ndtr": "special_normal", "zeta": "special_gamma",
                    "gammainc": "special_gamma", "gammaincc": "special_gamma"}


def _special_function(name):
    def call(*args):
        import importlib
        from ember._backend import special, special_gamma
        for a in args:
            if not isinstance(a, (ndarray, int, float)):
                raise TypeError(f"Unsupported type {type(a)}")
        host = [a.get() if isinstance(a, ndarray) else a for a in args]
        if name == "polygamma":
            if not isinstance(args[0], ndarray):
                raise AttributeError("'bool' object has no attribute 'astype'")  # as CuPy's, from its where()
            n, x = host
            order = int(np.asarray(n).reshape(-1)[0])
            if order == 1:
                return _wrap(special.trigamma(np, x))
            return _wrap(special_gamma.polygamma(np, order, x).astype(x.dtype))
        module = importlib.import_module(f"ember._backend.{_SPECIAL_MODULES.get(name, 'special')}")
        result = getattr(module, _SPECIAL_NAMES.get(name, name))(np, *host)
        dtype = np.result_type(*host)
        return _wrap(np.asarray(result).astype(np.float64 if dtype == np.float16 else dtype, copy=False))
    call.__name__ = name
    return call


class _Special(types.ModuleType):
    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return _special_function(name)


cupyx = types.ModuleType("cupyx")
cupyx.scipy = types.ModuleType("cupyx.scipy")
cupyx.scipy.special = _Special("cupyx.scipy.special")
_CUPYX_MODULES = {"cupyx": cupyx, "cupyx.scipy": cupyx.scipy, "cupyx.scipy.special": cupyx.scipy.special}

# -- switching it on and off ---------------------------------------------------------------------

_saved = []


def install(device_count=1):
    """Make ``import cupy`` (and ``cupyx.scipy.special``) give this module and ember's CUDA
    backend load it."""
    from ember import _backend
    names = ("cupy",) + tuple(_CUPYX_MODULES)
    _saved.append({name: sys.modules.get(name) for name in names})
    _state.device, _state.device_count, _state.stream = 0, device_count, None
    sys.modules["cupy"] = sys.modules[__name__]
    sys.modules.update(_CUPYX_MODULES)
    _backend.reset_cuda()
    assert _backend.load_cuda() is not None


def uninstall():
    from ember import _backend
    for name, previous in _saved.pop().items():
        if previous is None:
            sys.modules.pop(name, None)
        else:
            sys.modules[name] = previous
    _backend.reset_cuda()
