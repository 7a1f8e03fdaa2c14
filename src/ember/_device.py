"""``ember.device``: where a tensor's data lives, and the default device of the factory
functions (``set_default_device``, ``with ember.device(...)``)."""
import threading

__all__ = ["device", "get_default_device", "set_default_device"]


class _DefaultDevice(threading.local):
    """The default device of this thread's factory calls (None: the CPU), as torch's."""
    device = None
    stack = ()  # the defaults that enclosing ``with device(...)`` blocks replaced


_default = _DefaultDevice()


class device:
    """A device type and index, e.g. ``device("cpu")``, ``device("cuda", 0)``, ``device("cuda:1")``."""

    __slots__ = ("type", "index")

    def __init__(self, type, index=None):
        if isinstance(type, device):
            self.type, self.index = type.type, type.index
            return
        if isinstance(type, int) and not isinstance(type, bool):
            type, index = _accelerator_type(), type
        elif not isinstance(type, str):
            raise TypeError(f"device() received an invalid combination of arguments - got "
                            f"({type.__class__.__name__}), but expected one of:\n"
                            " * (ember.device device)\n * (str type, int index = -1)\n")
        elif ":" in type:
            if index is not None:
                raise RuntimeError("type (string) must not include an index because index was passed "
                                   f"explicitly: {type}")
            type, _, idx = type.partition(":")
            if not idx.isdigit():
                raise RuntimeError(f"Invalid device string: '{type}:{idx}'")
            index = int(idx)
        if type not in _DEVICE_TYPES:
            raise RuntimeError(f"Expected one of {', '.join(_DEVICE_TYPES)} device type at start of "
                               f"device string: {type}")
        if index is not None and index < 0:
            raise RuntimeError("Device index must not be negative")
        self.type = type
        self.index = index

    def __eq__(self, other):
        if other.__class__ is not device:
            return NotImplemented
        return self.type == other.type and self.index == other.index

    def __hash__(self):
        return hash((self.type, self.index))

    def __repr__(self):
        if self.index is None:
            return f"device(type='{self.type}')"
        return f"device(type='{self.type}', index={self.index})"

    def __str__(self):
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __reduce__(self):
        return (device, (self.type, self.index))

    def __enter__(self):
        """Within the block, factory functions called without ``device`` allocate on this
        device, as torch's ``with torch.device(...)``."""
        _default.stack += (_default.device,)
        _default.device = self
        return self

    def __exit__(self, *exc):
        _default.device = _default.stack[-1]
        _default.stack = _default.stack[:-1]


# the device types torch's parser knows (ember computes on cpu and, with CuPy, cuda)
_DEVICE_TYPES = ("cpu", "cuda", "ipu", "xpu", "mkldnn", "opengl", "opencl", "ideep", "hip", "ve",
                 "fpga", "maia", "xla", "lazy", "vulkan", "mps", "meta", "hpu", "mtia",
                 "privateuseone")


def _accelerator_type():
    """The device type a bare index means: cuda, when its backend is available."""
    from ._backend import load_cuda
    if load_cuda() is None:
        raise RuntimeError("Cannot access accelerator device when none is available.")
    return "cuda"


CPU = device("cpu")
_as_device = device


def get_default_device():
    r"""Gets the default ``ember.Tensor`` to be allocated on ``device``"""
    dev = _default.device
    if dev is None:
        return CPU
    if dev.index is None and dev.type == "cuda":
        from . import cuda
        return device("cuda", cuda.current_device())
    return dev


def set_default_device(device):
    """Sets the default ``ember.Tensor`` to be allocated on ``device``. This does not affect
    factory function calls which are called with an explicit ``device`` argument. Factory
    calls will be performed as if they were passed ``device`` as an argument.

    To only temporarily change the default device instead of setting it globally, use
    ``with ember.device(device):`` instead. The default device is initially ``cpu``.
    Functions that create tensors sharing memory with their input (``from_numpy``) and the
    ``*_like`` functions are not affected."""
    _default.device = None if device is None else _as_device(device)


def default_device(dev):
    """``dev``, or the default device when it is None (None still, for the CPU)."""
    return _default.device if dev is None else dev


def to_device(obj):
    if obj.__class__ is device:
        return obj
    if obj is None:
        return CPU
    return device(obj)
