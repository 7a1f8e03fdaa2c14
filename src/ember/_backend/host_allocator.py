"""Keep freed host buffers in the process heap instead of returning them to the kernel.

glibc's malloc serves large blocks (above a threshold it adjusts as it goes) with fresh ``mmap``
pages and returns the top of the heap to the kernel as soon as 128 KiB of it is free. A training
step frees and re-allocates the same few-hundred-KiB to few-MiB temporaries every step, so each
one page-faults its memory in again, which costs more than computing on it. Raising
both thresholds keeps those buffers in the heap for reuse, which is what torch's CPU allocator
achieves with its own caching. Memory that is freed stays reserved by the process (up to the trim
threshold), as with any caching allocator.

Applied once when ember is imported, on glibc only; ``EMBER_MALLOC_TUNING=0`` turns it off, and
glibc's own ``MALLOC_MMAP_THRESHOLD_`` / ``MALLOC_TRIM_THRESHOLD_`` variables, when set, win.
"""
import ctypes
import os

MMAP_THRESHOLD_BYTES = 64 * 1024 * 1024
TRIM_THRESHOLD_BYTES = 256 * 1024 * 1024
_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3

applied = False


def tune():
    """Raise glibc's mmap and trim thresholds; returns True when applied."""
    global applied
    if applied or os.environ.get("EMBER_MALLOC_TUNING", "1") == "0":
        return applied
    if "MALLOC_MMAP_THRESHOLD_" in os.environ or "MALLOC_TRIM_THRESHOLD_" in os.environ:
        return False
    try:
        mallopt = ctypes.CDLL(None).mallopt  # the C library the process already runs on
    except (OSError, AttributeError):
        return False  # not glibc (macOS, musl without mallopt, Windows)
    mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    mallopt.restype = ctypes.c_int
    applied = bool(mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD_BYTES)) and bool(
        mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD_BYTES))
    return applied
