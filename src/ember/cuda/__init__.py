"""``ember.cuda``: CUDA devices through CuPy.

Everything here answers without error on a machine with no GPU or no CuPy where torch's CPU
build does (``is_available()`` is False, ``device_count()`` 0, the memory counters 0); calls
that need a GPU raise an AssertionError (torch's type) saying why there is none.
"""
from .. import _backend
from .._device import device as _device_cls

__all__ = [
    "is_available", "device_count", "current_device", "set_device", "device", "device_of",
    "get_device_name", "get_device_properties", "get_device_capability", "synchronize",
    "is_initialized", "init", "manual_seed", "manual_seed_all", "seed", "seed_all",
    "Stream", "Event", "StreamContext", "stream", "current_stream", "default_stream",
    "set_stream", "memory_allocated", "max_memory_allocated", "memory_reserved",
    "max_memory_reserved", "reset_peak_memory_stats", "reset_max_memory_allocated",
    "empty_cache", "memory_stats", "memory_summary",
]

_state = {"initialized": False}


def is_available():
    """True if ember can use a CUDA GPU (CuPy is installed and sees one)."""
    return _backend.load_cuda() is not None


def _lazy_init():
    """The CUDA backend, or torch's AssertionError naming why there is none."""
    backend = _backend.load_cuda()
    if backend is None:
        raise AssertionError(_backend.cuda_unavailable_reason())
    _state["initialized"] = True
    return backend


def init():
    """Initializes ember's CUDA state (done lazily by every CUDA call)."""
    _lazy_init()


def is_initialized():
    """True once ember's CUDA state has been initialized."""
    return _state["initialized"]


def _cupy():
    return _lazy_init().xp


def device_count():
    """The number of CUDA GPUs (0 without a GPU or without CuPy)."""
    if not is_available():
        return 0
    return _cupy().cuda.runtime.getDeviceCount()


def _index(device, optional=True):
    """A device argument (int, str, ember.device or None) as a CUDA device index."""
    if device is None:
        return current_device() if optional else None
    if isinstance(device, str):
        device = _device_cls(device)
    if isinstance(device, _device_cls):
        if device.type != "cuda":
            raise ValueError(f"Expected a cuda device, but got: {device}")
        return current_device() if device.index is None else device.index
    if isinstance(device, int) and not isinstance(device, bool):
        return device
    raise ValueError(f"Invalid device, must be cuda device, got {device!r}")


def current_device():
    """The index of the currently selected device."""
    return _cupy().cuda.runtime.getDevice()


def set_device(device):
    """Sets the current device (a negative index does nothing)."""
    index = _index(device)
    if index >= 0:
        _cupy().cuda.Device(index).use()


class device:
    """Context manager that changes the selected device (``None`` or -1 changes nothing)."""

    def __init__(self, device):
        self.idx = -1 if device is None else _index(device)
        self.prev_idx = -1

    def __enter__(self):
        if self.idx >= 0:
            self.prev_idx = current_device()
            if self.prev_idx != self.idx:
                set_device(self.idx)

    def __exit__(self, *exc):
        if self.idx >= 0 and self.prev_idx != self.idx:
            set_device(self.prev_idx)
        return False


class device_of(device):
    """Context manager that selects the device of ``obj`` (a tensor); no-op for CPU tensors."""

    def __init__(self, obj):
        super().__init__(obj.get_device() if obj.is_cuda else -1)


class _CudaDeviceProperties:
    """What the CUDA runtime reports about one device."""

    def __init__(self, props):
        name = props["name"]
        self.name = name.decode() if isinstance(name, bytes) else str(name)
        self.major, self.minor = props["major"], props["minor"]
        self.total_memory = props["totalGlobalMem"]
        self.multi_processor_count = props["multiProcessorCount"]
        self.L2_cache_size = props.get("l2CacheSize", 0)

    def __repr__(self):
        return (f"_CudaDeviceProperties(name='{self.name}', major={self.major}, minor={self.minor}, "
                f"total_memory={self.total_memory // 2 ** 20}MB, "
                f"multi_processor_count={self.multi_processor_count}, "
                f"L2_cache_size={self.L2_cache_size // 2 ** 20}MB)")


def get_device_properties(device=None):
    """The properties of a device (name, compute capability, memory, multiprocessors)."""
    index = _index(device)
    count = device_count()
    if not 0 <= index < count:
        raise AssertionError("Invalid device id")
    return _CudaDeviceProperties(_cupy().cuda.runtime.getDeviceProperties(index))


def get_device_name(device=None):
    """The name of a device."""
    return get_device_properties(device).name


def get_device_capability(device=None):
    """The (major, minor) CUDA compute capability of a device."""
    props = get_device_properties(device)
    return props.major, props.minor


def synchronize(device=None):
    """Waits for all kernels in all streams on a CUDA device to complete."""
    cupy = _cupy()
    with cupy.cuda.Device(_index(device)):
        cupy.cuda.runtime.deviceSynchronize()


def manual_seed(seed):
    """Sets the seed of the current GPU's CuPy generator; silently ignored without a GPU.
    ember draws its own samples on the host (``ember.manual_seed`` governs those)."""
    if is_available():
        _cupy().random.seed(int(seed) % 2 ** 32)


def manual_seed_all(seed):
    """Sets the seed on all GPUs; silently ignored without a GPU."""
    if not is_available():
        return
    cupy = _cupy()
    for index in range(device_count()):
        with cupy.cuda.Device(index):
            cupy.random.seed(int(seed) % 2 ** 32)


def seed():
    """Seeds the current GPU's generator with a random number; ignored without a GPU."""
    if is_available():
        _cupy().random.seed()


def seed_all():
    """Seeds all GPUs' generators with random numbers; ignored without a GPU."""
    if is_available():
        for index in range(device_count()):
            with _cupy().cuda.Device(index):
                _cupy().random.seed()


from .streams import Event, Stream, StreamContext, current_stream, default_stream, set_stream, stream  # noqa: E402
from .memory import (  # noqa: E402
    empty_cache, max_memory_allocated, max_memory_reserved, memory_allocated, memory_reserved,
    memory_stats, memory_summary, reset_max_memory_allocated, reset_peak_memory_stats,
)
from . import _tensor_methods  # noqa: E402,F401
from . import amp  # noqa: E402,F401
from .._legacy_tensor_types import CUDA_TENSOR_TYPES as _CUDA_TENSOR_TYPES  # noqa: E402
globals().update(_CUDA_TENSOR_TYPES)   # ember.cuda.FloatTensor, ... (their instances are CUDA tensors)
