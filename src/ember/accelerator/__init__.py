"""The current accelerator, as ``torch.accelerator``: ember's one accelerator is CUDA (through
CuPy); without it there is none, and the calls that need a device raise torch's error."""
import warnings

from .. import cuda as _cuda
from .._device import device as _device
from ._common import NONE as _NONE
from . import graphs, memory  # noqa: F401
from .graphs import Graph
from .memory import (empty_cache, empty_host_cache, get_memory_info, max_memory_allocated,
                     max_memory_reserved, memory_allocated, memory_reserved, memory_stats,
                     reset_accumulated_memory_stats, reset_peak_memory_stats)

__all__ = ["Graph", "current_accelerator", "current_device_idx", "current_device_index",
           "get_device_capability", "current_stream", "device_count", "device_index",
           "empty_cache", "empty_host_cache", "get_memory_info", "is_available",
           "max_memory_allocated", "max_memory_reserved", "memory_allocated", "memory_reserved",
           "memory_stats", "reset_accumulated_memory_stats", "reset_peak_memory_stats",
           "set_device_idx", "set_device_index", "set_stream", "synchronize"]


def current_accelerator(check_available=False):
    """Return the device of the accelerator available at compilation time (CUDA, when ember's
    CUDA backend, CuPy, is installed); None without one. With ``check_available``, also
    require it to be available at runtime."""
    from ..backends import cuda as built
    usable = _cuda.is_available() if check_available else (_cuda.is_available() or built.is_built())
    return _device("cuda") if usable else None


def is_available():
    """Check if the current accelerator is available at runtime: it was built, all the
    required drivers are available and at least one device is visible."""
    return current_accelerator() is not None and _cuda.is_available()


def device_count():
    """Return the number of current accelerator available (0 without one)."""
    return 0 if current_accelerator() is None else _cuda.device_count()


from ._common import index as _index  # noqa: E402


def current_device_index():
    """Return the index of a currently selected device for the current accelerator."""
    if current_accelerator() is None:
        raise RuntimeError(_NONE)
    return _cuda.current_device()


def current_device_idx():
    """Deprecated alias of ``current_device_index``."""
    warnings.warn("Use `current_device_index` instead.", FutureWarning, stacklevel=2)
    return current_device_index()


def set_device_index(device, /):
    """Set the current device index to a given device (a no-op if the index is negative)."""
    index = _index(device, optional=False)
    if index >= 0:
        _cuda.set_device(index)


def set_device_idx(device, /):
    """Deprecated alias of ``set_device_index``."""
    warnings.warn("Use `set_device_index` instead.", FutureWarning, stacklevel=2)
    set_device_index(device)


def synchronize(device=None, /):
    """Wait for all kernels in all streams on the given device (by default the current one)
    to complete."""
    _cuda.synchronize(_index(device, optional=True))


class device_index:
    """Context manager that sets the current device index of the accelerator within the
    block (``None`` changes nothing) and restores the previous one afterwards."""

    def __init__(self, device, /):
        self.idx = device
        self.prev_idx = -1

    def __enter__(self):
        if self.idx is not None:
            self.prev_idx = current_device_index()
            set_device_index(self.idx)

    def __exit__(self, *exc):
        if self.idx is not None:
            set_device_index(self.prev_idx)
        return False


def get_device_capability(device=None, /):
    """Return the capability of the currently selected device (or ``device``): a dict whose
    ``supported_dtypes`` is the set of dtypes tensors on it can have."""
    _index(device, optional=True)
    from .. import _dtype
    return {"supported_dtypes": set(_dtype.ALL_DTYPES)}


def current_stream(device=None, /):
    """Return the currently selected stream for a given device (by default the current one)."""
    return _cuda.current_stream(_index(device, optional=True))


def set_stream(stream):
    """Set the current stream to a given stream (and the current device index to the
    stream's device)."""
    if not isinstance(stream, _cuda.Stream):
        raise TypeError("set_stream(): expected an accelerator stream (ember.cuda.Stream), got "
                        f"{type(stream).__name__}")
    if current_accelerator() is None:
        raise RuntimeError(_NONE)
    _cuda.set_stream(stream)
