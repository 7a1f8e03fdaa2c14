"""What the accelerator's modules share: torch's error without one, and device indices."""
from .. import cuda as _cuda
from .._device import device as _device

NONE = "Cannot access accelerator device when none is available."


def require():
    """torch's RuntimeError unless an accelerator (CUDA) is there."""
    if not _cuda.is_available():
        raise RuntimeError(NONE)


def index(device, optional):
    """``device`` (an ember.device, str, int or None) as an accelerator device index, with
    torch's errors when there is no accelerator or the device is not one."""
    if isinstance(device, (str, _device)) and _device(device).type != "cuda":
        raise RuntimeError("Accelerator expected")
    if device is None and not optional:
        raise ValueError("Expected a ember.device with a specified index or an integer, but got:None")
    from . import current_accelerator
    if current_accelerator() is None:
        raise RuntimeError(NONE)
    return _cuda._index(device, optional=optional)
