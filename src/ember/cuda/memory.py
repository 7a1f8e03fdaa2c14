"""GPU memory statistics and the caching allocator's controls.

ember allocates through CuPy's memory pool, a caching allocator that keeps freed blocks for
reuse, one free list per stream; the backend counts peaks at each allocation. Without a GPU
every counter is 0, as in torch's CPU build.
"""
from .. import _backend
from . import _index, is_available

__all__ = ["memory_allocated", "max_memory_allocated", "memory_reserved", "max_memory_reserved",
           "reset_peak_memory_stats", "reset_max_memory_allocated", "empty_cache", "memory_stats",
           "memory_summary"]


def _counts(device):
    """(allocated, peak allocated, reserved, peak reserved) bytes; zeros without a GPU."""
    if not is_available():
        return 0, 0, 0, 0
    return _backend.load_cuda().memory_counts(_index(device))


def memory_allocated(device=None):
    """The bytes of GPU memory held by tensors on ``device``."""
    return _counts(device)[0]


def max_memory_allocated(device=None):
    """The most bytes held by tensors since the start or ``reset_peak_memory_stats``."""
    return _counts(device)[1]


def memory_reserved(device=None):
    """The bytes of GPU memory held by the caching allocator (in use or cached)."""
    return _counts(device)[2]


def max_memory_reserved(device=None):
    """The most bytes held by the caching allocator since the start or the last reset."""
    return _counts(device)[3]


def reset_peak_memory_stats(device=None):
    """Starts the peak counters afresh from the current amounts."""
    if is_available():
        _backend.load_cuda().reset_peaks(_index(device))


reset_max_memory_allocated = reset_peak_memory_stats


def empty_cache():
    """Returns the caching allocator's unused blocks to the GPU driver."""
    if is_available():
        _backend.load_cuda().release_cached_memory()


def memory_stats(device=None):
    """The allocator's statistics as a dict (torch's key names); empty without a GPU."""
    if not is_available():
        return {}
    allocated, peak_allocated, reserved, peak_reserved = _counts(device)
    return {
        "allocated_bytes.all.current": allocated, "allocated_bytes.all.peak": peak_allocated,
        "reserved_bytes.all.current": reserved, "reserved_bytes.all.peak": peak_reserved,
        "inactive_split_bytes.all.current": reserved - allocated,
    }


def _mib(n):
    return f"{n / 2 ** 20:10.2f} MiB"


def memory_summary(device=None, abbreviated=False):
    """A printable table of the allocator's statistics for ``device``."""
    stats = memory_stats(device)
    if not stats:
        return "No CUDA device: no memory statistics (ember.cuda.is_available() is False)."
    rule = "=" * 60
    rows = [("Allocated memory", stats["allocated_bytes.all.current"], stats["allocated_bytes.all.peak"]),
            ("Reserved memory", stats["reserved_bytes.all.current"], stats["reserved_bytes.all.peak"]),
            ("Cached, unused", stats["inactive_split_bytes.all.current"], None)]
    lines = [rule, f" ember CUDA memory summary, device {_index(device)} (CuPy memory pool)", rule,
             f" {'Metric':<20}{'Current':>16}{'Peak':>16}", "-" * 60]
    for name, now, peak in rows:
        lines.append(f" {name:<20}{_mib(now):>16}{_mib(peak) if peak is not None else '':>16}")
    lines.append(rule)
    return "\n".join(lines)
