"""The CUDA backend: CuPy arrays, CuPy kernels.

Imports whichever CuPy package is installed (``cupy-cuda12x``, ``cupy-cuda13x``, ...); it is
registered by ``_backend.load_cuda`` only when ``cupy.is_available()``. A tensor's device
index is its array's ``array.device.id``. Copies from the host go through pinned memory on the
current stream when asked to be non-blocking. CuPy has no bfloat16 dtype: such tensors stay on
the CPU.
"""
import weakref

import cupy as xp
import numpy as np

device_type = "cuda"
ndarray = xp.ndarray
_BFLOAT16_MESSAGE = ("ember cannot place bfloat16 tensors on cuda: CuPy has no bfloat16 dtype; "
                     "use float16 or float32")


def _device(index):
    """CuPy's context for device ``index`` (the current device when None)."""
    return xp.cuda.Device(index) if index is not None else xp.cuda.Device()


def asarray(obj, dtype=None):
    return xp.asarray(obj, dtype=dtype)


def from_array(array, index=None, non_blocking=False):
    """``array`` (of any backend) as a CuPy array on device ``index`` (the current device when
    None); no copy when it is there already."""
    if isinstance(array, ndarray):
        if index is None or array.device.id == index:
            return array
        with _device(index):
            return array.copy()  # CuPy copies to the current device (peer-to-peer)
    array = np.asarray(array)
    if array.dtype.kind == "V" or array.dtype.name == "bfloat16":
        raise TypeError(_BFLOAT16_MESSAGE)
    with _device(index):
        if not non_blocking:
            return xp.asarray(array)
        staged = array if is_pinned(array) and array.flags.c_contiguous else pinned_copy(array)
        out = xp.empty(array.shape, dtype=array.dtype)
        out.set(staged, stream=xp.cuda.get_current_stream())
        _keep_alive_until_done(staged)
        return out


def to_host(array, non_blocking=False):
    """``array`` in host memory. A non-blocking copy lands in pinned memory and may still be
    under way when this returns (synchronize the current stream before reading it)."""
    if not non_blocking:
        return array.get()
    out = empty_pinned(array.shape, array.dtype)
    array.get(stream=xp.cuda.get_current_stream(), out=out)
    return out


def data_ptr(array):
    return array.data.ptr


def base_allocation(array):
    """The array that owns the memory ``array`` looks into."""
    while isinstance(array.base, ndarray):
        array = array.base
    return array


def device_of(array):
    return device("cuda", array.device.id)


# ---------------------------------------------------------------------------------------
# Pinned (page-locked) host memory

_pinned_roots = {}  # id(root array) -> weakref to it


def empty_pinned(shape, dtype):
    """An uninitialised NumPy array in page-locked host memory."""
    dtype = np.dtype(dtype)
    count = int(np.prod(shape, dtype=np.int64))
    memory = xp.cuda.alloc_pinned_memory(max(count * dtype.itemsize, 1))
    root = np.frombuffer(memory, dtype=dtype, count=count)
    key = id(root)
    _pinned_roots[key] = weakref.ref(root, lambda _, key=key: _pinned_roots.pop(key, None))
    return root.reshape(shape)


def pinned_copy(array):
    """A copy of the host array ``array`` in page-locked memory."""
    out = empty_pinned(array.shape, array.dtype)
    np.copyto(out, array)
    return out


def is_pinned(array):
    """True if the host array ``array`` lives in page-locked memory made by ember."""
    while isinstance(array.base, np.ndarray):
        array = array.base
    ref = _pinned_roots.get(id(array))
    return ref is not None and ref() is array


_in_flight = []  # (event, host buffer) pairs of non-blocking uploads not yet known finished


def _keep_alive_until_done(host):
    """Hold ``host`` until the copy queued from it on the current stream has run."""
    event = xp.cuda.Event(disable_timing=True)
    event.record()
    _in_flight.append((event, host))
    while _in_flight and _in_flight[0][0].done:
        _in_flight.pop(0)


# ---------------------------------------------------------------------------------------
# Allocation: CuPy's memory pool (which keeps its free blocks per stream), with peaks counted

_pool = xp.get_default_memory_pool()
_peaks = {}  # device index -> [peak allocated bytes, peak reserved bytes]


def _counting_malloc(size):
    memory = _pool.malloc(size)
    peaks = _peaks.setdefault(memory.device_id, [0, 0])
    used, reserved = _pool.used_bytes(), _pool.total_bytes()
    if used > peaks[0]:
        peaks[0] = used
    if reserved > peaks[1]:
        peaks[1] = reserved
    return memory


xp.cuda.set_allocator(_counting_malloc)


def memory_counts(index):
    """(allocated, peak allocated, reserved, peak reserved) bytes on device ``index``."""
    with _device(index):
        used, reserved = _pool.used_bytes(), _pool.total_bytes()
    peak_used, peak_reserved = _peaks.get(index, (0, 0))
    return used, max(peak_used, used), reserved, max(peak_reserved, reserved)


def reset_peaks(index):
    with _device(index):
        _peaks[index] = [_pool.used_bytes(), _pool.total_bytes()]


def release_cached_memory():
    """Give the pool's unused blocks back to the driver."""
    _pool.free_all_blocks()
    xp.get_default_pinned_memory_pool().free_all_blocks()


def keep_until_stream_done(owner, array, stream):
    """When ``owner`` (a tensor) is freed, keep ``array``'s memory from reuse until the work
    then queued on ``stream`` has run (torch's ``record_stream``)."""
    weakref.finalize(owner, _hold_until_queued_work_done, base_allocation(array), stream)


def _hold_until_queued_work_done(array, stream):
    event = xp.cuda.Event(disable_timing=True)
    event.record(stream)
    _in_flight.append((event, array))


from .._device import device  # noqa: E402
