"""The accelerator's memory statistics and caching allocator, as ``torch.accelerator.memory``:
ember.cuda's where CUDA is there; without an accelerator each call raises torch's error."""
from collections import OrderedDict

from .. import cuda as _cuda
from ._common import index, require

__all__ = ["empty_cache", "empty_host_cache", "get_memory_info", "max_memory_allocated",
           "max_memory_reserved", "memory_allocated", "memory_reserved", "memory_stats",
           "reset_accumulated_memory_stats", "reset_peak_memory_stats"]


def empty_cache():
    """Release all unoccupied cached memory currently held by the caching allocator so that
    those can be used in other application."""
    require()
    _cuda.empty_cache()


def empty_host_cache():
    """Release all unoccupied cached host (pinned) memory held by the host caching allocator."""
    require()
    _cuda._cupy().get_default_pinned_memory_pool().free_all_blocks()


def memory_stats(device_index=None, /):
    """Return a dictionary of accelerator device memory allocator statistics for a given
    device index, sorted by key."""
    require()
    return OrderedDict(sorted(_cuda.memory_stats(index(device_index, optional=True)).items()))


def memory_allocated(device_index=None, /):
    """Return the current device memory occupied by tensors in bytes for a given device."""
    return memory_stats(device_index).get("allocated_bytes.all.current", 0)


def max_memory_allocated(device_index=None, /):
    """Return the peak device memory occupied by tensors in bytes for a given device, since
    the start or ``reset_peak_memory_stats``."""
    return memory_stats(device_index).get("allocated_bytes.all.peak", 0)


def memory_reserved(device_index=None, /):
    """Return the current device memory managed by the caching allocator in bytes."""
    return memory_stats(device_index).get("reserved_bytes.all.current", 0)


def max_memory_reserved(device_index=None, /):
    """Return the peak device memory managed by the caching allocator in bytes."""
    return memory_stats(device_index).get("reserved_bytes.all.peak", 0)


def reset_accumulated_memory_stats(device_index=None, /):
    """Reset the "accumulated" (historical) stats tracked by the caching allocator (ember's
    allocator keeps none besides the peaks)."""
    require()
    index(device_index, optional=True)


def reset_peak_memory_stats(device_index=None, /):
    """Reset the "peak" stats tracked by the caching allocator."""
    require()
    _cuda.reset_peak_memory_stats(index(device_index, optional=True))


def get_memory_info(device_index=None, /):
    """Return the free and total device memory in bytes, as the driver reports them."""
    require()
    device = index(device_index, optional=True)
    cupy = _cuda._cupy()
    with cupy.cuda.Device(device):
        return tuple(cupy.cuda.runtime.memGetInfo())
