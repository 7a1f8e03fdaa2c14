"""Array backends, one per device type.

A backend owns an array namespace ``xp`` (NumPy for ``cpu``, CuPy for ``cuda``), allocation,
copies between devices and random streams. Ops never import NumPy for math: they ask
``namespace_of(array)`` for the namespace of the arrays they were given.

The CUDA backend is loaded lazily, the first time a ``cuda`` device or a CuPy array is met
(``load_cuda``): importing CuPy costs a good fraction of a second, which a CPU-only program
should not pay.
"""
import sys

from . import cpu, meta, sparse_coo, sparse_csr

_BACKEND_BY_ARRAY_TYPE = {cpu.ndarray: cpu, meta.ndarray: meta, sparse_coo.ndarray: sparse_coo,
                         sparse_csr.ndarray: sparse_csr}
_BACKEND_BY_DEVICE_TYPE = {"cpu": cpu, "meta": meta}
_cuda_unavailable = []  # the reason, once CuPy was looked for and found unusable


def register(module):
    """Make a backend module (exposing ``ndarray``, ``xp``, ``device_type``) known."""
    _BACKEND_BY_ARRAY_TYPE[module.ndarray] = module
    _BACKEND_BY_DEVICE_TYPE[module.device_type] = module


def unregister(device_type):
    """Forget the backend of ``device_type`` (tests swap a stand-in CuPy in and out)."""
    module = _BACKEND_BY_DEVICE_TYPE.pop(device_type, None)
    if module is not None:
        _BACKEND_BY_ARRAY_TYPE.pop(module.ndarray, None)


def backend_of(array):
    try:
        return _BACKEND_BY_ARRAY_TYPE[array.__class__]
    except KeyError:
        return _backend_of_unknown(array)


def namespace_of(array):
    """The array namespace (``numpy`` or ``cupy``) that computes on ``array``."""
    try:
        return _BACKEND_BY_ARRAY_TYPE[array.__class__].xp
    except KeyError:
        return _backend_of_unknown(array).xp


def to_device_of(array, like):
    """``array`` (of any backend) on the device of the array ``like``; itself when it is there
    already. For what ops make on the host (index arrays, pivots, random draws) and then
    compute with a tensor's data."""
    if array.__class__ is like.__class__:
        return array
    backend = backend_of(like)
    return backend.from_array(array, backend.device_of(like).index)


def _backend_of_unknown(array):
    if load_cuda() is not None and array.__class__ in _BACKEND_BY_ARRAY_TYPE:
        return _BACKEND_BY_ARRAY_TYPE[array.__class__]
    raise TypeError(f"ember has no backend for arrays of type {type(array).__module__}."
                    f"{type(array).__name__}")


def backend_for(device):
    try:
        return _BACKEND_BY_DEVICE_TYPE[device.type]
    except KeyError:
        pass
    if device.type == "cuda":
        backend = load_cuda()
        if backend is None:
            raise AssertionError(cuda_unavailable_reason())
        return backend
    raise RuntimeError(
        f"ember was built without support for device type '{device.type}' "
        "(no backend is available for it on this machine)")


def load_cuda():
    """The CUDA backend module, registered on first use; None when CuPy is missing or sees no
    GPU (``cuda_unavailable_reason()`` then says which)."""
    backend = _BACKEND_BY_DEVICE_TYPE.get("cuda")
    if backend is not None or _cuda_unavailable:
        return backend
    reason = _cupy_problem()
    if reason is not None:
        _cuda_unavailable.append(reason)
        return None
    from . import cuda
    register(cuda)
    return cuda


def _cupy_problem():
    """Why CuPy cannot serve as ember's CUDA backend here, or None when it can."""
    try:
        import cupy
    except ImportError:
        return "ember has no CUDA device: CuPy is not installed (pip install ember[cuda])"
    except Exception as e:  # a broken CuPy install (missing CUDA libraries, ...)
        return f"ember has no CUDA device: importing CuPy failed ({type(e).__name__}: {e})"
    try:
        available = cupy.is_available()
    except Exception:
        available = False
    if not available:
        return "ember has no CUDA device: CuPy is installed but finds no usable CUDA GPU or driver"
    return None


def cuda_unavailable_reason():
    """The message ember raises (as an AssertionError, like torch) for CUDA calls without a GPU."""
    if load_cuda() is not None:
        return None
    return _cuda_unavailable[0]


def reset_cuda():
    """Forget the CUDA backend and the reason it was missing, so the next use looks for CuPy
    again (``sys.modules['cupy']`` may have been replaced in between, as tests do)."""
    unregister("cuda")
    _cuda_unavailable.clear()
    sys.modules.pop(__name__ + ".cuda", None)


def check_same_device(*tensors):
    """Raise torch's error when ``tensors`` (None entries and numbers skipped) live on more
    than one device. Ops call this only after their arrays refused to mix, so the all-CPU
    path never pays for it."""
    devices = []
    for t in tensors:
        data = getattr(t, "_data", None)
        if data is not None:
            device = backend_of(data).device_of(data)
            if device not in devices:
                devices.append(device)
    if len(devices) > 1:
        first, second = sorted(devices[:2], key=lambda d: d.type == "cpu")
        raise RuntimeError("Expected all tensors to be on the same device, but found at least two "
                           f"devices, {first} and {second}!")
