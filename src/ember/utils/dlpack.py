"""DLPack interchange: ``Tensor.__dlpack__``, ``Tensor.__dlpack_device__`` and
``from_dlpack``, sharing memory with the other library (no copy)."""
import numpy as np

from .._tensor import Tensor, _make
from ..ops._common import method

__all__ = ["from_dlpack", "to_dlpack"]


def from_dlpack(ext_tensor):
    """A tensor sharing memory with ``ext_tensor``, any object with ``__dlpack__`` (a NumPy
    array, a torch tensor, ...) or a DLPack capsule."""
    if isinstance(ext_tensor, Tensor):
        return ext_tensor
    if hasattr(ext_tensor, "__dlpack__"):
        device_type = ext_tensor.__dlpack_device__()[0] if hasattr(ext_tensor, "__dlpack_device__") else 1
        return _make(_namespace_for_device(device_type).from_dlpack(ext_tensor))
    return _make(_writable(np.from_dlpack(_CapsuleHolder(ext_tensor))))


class _WritableView:
    """Presents a read-only array's memory as writable, keeping the array alive: NumPy marks
    arrays from a legacy (unversioned) capsule read-only, torch treats them as writable."""

    def __init__(self, array):
        self._array = array
        interface = dict(array.__array_interface__)
        interface["data"] = (interface["data"][0], False)
        self.__array_interface__ = interface


def _writable(array):
    return array if array.flags.writeable else np.asarray(_WritableView(array))


def _namespace_for_device(device_type):
    """NumPy for host memory (kDLCPU = 1), CuPy for CUDA memory (kDLCUDA = 2)."""
    if device_type == 2:
        import cupy
        return cupy
    return np


class _CapsuleHolder:
    """Wraps a bare DLPack capsule (``to_dlpack``'s result) in the producer protocol."""

    def __init__(self, capsule):
        self._capsule = capsule

    def __dlpack__(self, stream=None, **kwargs):
        return self._capsule

    def __dlpack_device__(self):
        return (1, 0)


def to_dlpack(tensor):
    """A DLPack capsule for ``tensor`` (the legacy interface; prefer ``from_dlpack(tensor)``)."""
    return tensor.__dlpack__()


@method()
def __dlpack__(self, stream=None, *, max_version=None, dl_device=None, copy=None):
    """Exports this tensor as a DLPack capsule sharing its memory."""
    if self._requires_grad:
        raise RuntimeError("Can't export tensors that require gradient, use tensor.detach()")
    kwargs = {"stream": stream}
    if max_version is not None:
        kwargs["max_version"] = max_version
    if dl_device is not None:
        kwargs["dl_device"] = dl_device
    if copy is not None:
        kwargs["copy"] = copy
    return self._data.__dlpack__(**kwargs)


@method()
def __dlpack_device__(self):
    """``(device_type, device_id)`` of this tensor's memory, in DLPack's codes."""
    return self._data.__dlpack_device__()


