"""Tensor methods about CUDA placement: ``cuda``, ``get_device``, ``record_stream``,
``pin_memory`` and ``is_pinned``."""
from .. import _backend
from .._device import device as _device_cls
from .._tensor import _make
from ..ops._common import method


@method()
def cuda(self, device=None, non_blocking=False, memory_format=None):
    """A copy of this tensor in CUDA memory (self if it is on that device already);
    ``device`` defaults to the current CUDA device."""
    if device is None:
        target = _device_cls("cuda")
    elif isinstance(device, int) and not isinstance(device, bool):
        target = _device_cls("cuda", device)
    else:
        target = _device_cls(device)
        if target.type != "cuda":
            raise RuntimeError(f"Invalid device, must be cuda device, got {target}")
    if target.index is None:
        from . import current_device, _lazy_init
        _lazy_init()
        target = _device_cls("cuda", current_device())
    return self.to(target, non_blocking=non_blocking)


@method()
def get_device(self):
    """The index of the CUDA device holding this tensor; -1 for a CPU tensor."""
    device = self.device
    return -1 if device.type == "cpu" else device.index


@method()
def record_stream(self, stream):
    """Marks this tensor's memory as used by ``stream``: when the tensor is freed, the caching
    allocator does not reuse its memory until the work queued on ``stream`` by then is done."""
    from .streams import Stream
    if not isinstance(stream, Stream):
        raise TypeError(f"record_stream(): argument 's' must be Stream, not {type(stream).__name__}")
    if not self.is_cuda:
        raise RuntimeError("record_stream is only supported for CUDA tensors")
    _backend.backend_of(self._data).keep_until_stream_done(self, self._data, stream._cupy)


@method()
def pin_memory(self, device=None):
    """A copy of this CPU tensor in page-locked memory (self if it is there already), for fast
    and asynchronous copies to the GPU."""
    backend = _backend.load_cuda()
    if backend is None:
        raise RuntimeError("Cannot access accelerator device when none is available.")
    if not self.is_cpu:
        raise RuntimeError(f"cannot pin '{self.type()}' only dense CPU tensors can be pinned")
    if backend.is_pinned(self._data):
        return self
    return _make(backend.pinned_copy(self._data))


@method()
def is_pinned(self, device=None):
    """True if this tensor lives in page-locked host memory."""
    if not self.is_cpu:
        return False
    backend = _backend._BACKEND_BY_DEVICE_TYPE.get("cuda")
    return backend is not None and backend.is_pinned(self._data)


