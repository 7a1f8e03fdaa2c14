"""Shared-memory segments for tensors (torch's ``file_descriptor`` sharing strategy).

A segment is a file in ``/dev/shm`` that is unlinked the moment it is created: it has no name
left to leak, and it lives exactly as long as some process holds a descriptor or a mapping of
it (the kernel counts them), however the processes end. Another process gets the segment by
receiving a duplicate of its file descriptor (``multiprocessing.reduction.DupFd``) and maps it.

Arrays in shared memory are NumPy views of a :class:`SharedSegment` (an ``mmap`` subclass that
keeps the descriptor), so ``segment_of(array)`` finds the segment behind any view by walking
``array.base``.
"""
import errno
import itertools
import mmap
import os
import shutil
import weakref

import numpy as np

__all__ = ["SharedSegment", "SHM_DIR", "SHM_PREFIX", "empty_shared", "segment_of", "bytes_allocated"]

SHM_DIR = "/dev/shm"
SHM_PREFIX = "ember_"
_counter = itertools.count()
_stats = {"bytes": 0}


class SharedSegment(mmap.mmap):
    """A shared mapping of an unlinked ``/dev/shm`` file that keeps its file descriptor open
    (closed when the mapping is garbage collected) so it can be sent to other processes."""

    def __new__(cls, fd, size):
        seg = super().__new__(cls, fd, size, flags=mmap.MAP_SHARED,
                              prot=mmap.PROT_READ | mmap.PROT_WRITE)
        seg.fd = fd
        seg.size = size
        seg.address = np.frombuffer(seg, np.uint8).ctypes.data
        weakref.finalize(seg, os.close, fd)
        return seg


def _create_file():
    """An open, already unlinked file in ``SHM_DIR``; returns its descriptor."""
    while True:
        path = os.path.join(SHM_DIR, f"{SHM_PREFIX}{os.getpid()}_{next(_counter)}")
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
        except FileExistsError:  # left over by a process that reused our pid
            continue
        os.unlink(path)
        return fd


def _out_of_space_error(nbytes, err):
    free = shutil.disk_usage(SHM_DIR).free if os.path.isdir(SHM_DIR) else 0
    return RuntimeError(
        f"unable to allocate {nbytes} bytes of shared memory in {SHM_DIR} ({os.strerror(err.errno)}; "
        f"{free} bytes free). Tensors sent between processes (e.g. DataLoader batches with "
        f"num_workers > 0) live there: enlarge {SHM_DIR} (for Docker, `--shm-size`), or lower "
        "batch_size, num_workers or prefetch_factor.")


def new_segment(nbytes):
    """A new shared segment of ``nbytes`` bytes (at least one page is mapped). The space is
    reserved up front, so a full ``/dev/shm`` raises a clear RuntimeError here instead of a
    bus error at first touch."""
    size = max(int(nbytes), 1)
    try:
        fd = _create_file()
    except OSError as err:
        raise _out_of_space_error(size, err) from err
    try:
        os.posix_fallocate(fd, 0, size)
    except OSError as err:
        os.close(fd)
        if err.errno in (errno.ENOSPC, errno.ENOMEM, errno.EFBIG):
            raise _out_of_space_error(size, err) from err
        raise
    _stats["bytes"] += size
    return SharedSegment(fd, size)


def bytes_allocated():
    """Total bytes of shared memory this process has allocated (a counter for benchmarks)."""
    return _stats["bytes"]


def array_in(segment, shape, dtype, offset=0, strides=None):
    """A NumPy array looking into ``segment`` at byte ``offset``."""
    return np.ndarray(shape, dtype=dtype, buffer=segment, offset=offset, strides=strides)


def empty_shared(shape, dtype):
    """An uninitialised C-contiguous array of ``shape`` and ``dtype`` in a new segment."""
    dtype = np.dtype(dtype)
    nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    return array_in(new_segment(nbytes), shape, dtype)


def segment_of(array):
    """The :class:`SharedSegment` behind ``array`` (a NumPy array), or None."""
    base = array
    while isinstance(base, np.ndarray):
        base = base.base
    return base if isinstance(base, SharedSegment) else None


def offset_in(segment, array):
    """The byte offset of ``array``'s first element in ``segment``."""
    return array.__array_interface__["data"][0] - segment.address


def leftover_files():
    """Names in ``SHM_DIR`` with ember's prefix (there should be none outside a creation)."""
    try:
        return sorted(n for n in os.listdir(SHM_DIR) if n.startswith(SHM_PREFIX))
    except FileNotFoundError:
        return []
