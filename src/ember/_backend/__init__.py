"""Array backends, one per device type.

A backend owns an array namespace ``xp`` (NumPy for ``cpu``, CuPy for ``cuda``), allocation,
copies between devices and random streams. Ops never import NumPy for math: they ask
``namespace_of(array)`` for the namespace of the arrays they were given.
"""
from . import cpu

_BACKEND_BY_ARRAY_TYPE = {cpu.ndarray: cpu}
_BACKEND_BY_DEVICE_TYPE = {"cpu": cpu}


def register(module):
    """Make a backend module (exposing ``ndarray``, ``xp``, ``device_type``) known."""
    _BACKEND_BY_ARRAY_TYPE[module.ndarray] = module
    _BACKEND_BY_DEVICE_TYPE[module.device_type] = module


def backend_of(array):
    return _BACKEND_BY_ARRAY_TYPE[array.__class__]


def namespace_of(array):
    """The array namespace (``numpy`` or ``cupy``) that computes on ``array``."""
    return _BACKEND_BY_ARRAY_TYPE[array.__class__].xp


def backend_for(device):
    try:
        return _BACKEND_BY_DEVICE_TYPE[device.type]
    except KeyError:
        raise RuntimeError(
            f"ember was built without support for device type '{device.type}' "
            "(no backend is available for it on this machine)") from None
