"""Padding layers: constant, zero, reflection, replication and circular padding."""
from .. import functional as F
from .module import Module

__all__ = ["ConstantPad1d", "ConstantPad2d", "ConstantPad3d", "ZeroPad1d", "ZeroPad2d",
           "ZeroPad3d", "ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d",
           "ReplicationPad1d", "ReplicationPad2d", "ReplicationPad3d", "CircularPad1d",
           "CircularPad2d", "CircularPad3d"]


def _padding(padding, n):
    if isinstance(padding, int):
        return (padding,) * (2 * n)
    padding = tuple(padding)
    if len(padding) != 2 * n:
        raise ValueError(f"expected padding of length {2 * n}, got {len(padding)}")
    return padding


class _PadNd(Module):
    _dims = 1
    _mode = "constant"

    def __init__(self, padding, value=0.0):
        super().__init__()
        self.padding = _padding(padding, self._dims)
        self.value = value

    def forward(self, input):
        if self._mode == "constant":
            return F.pad(input, self.padding, "constant", self.value)
        return F.pad(input, self.padding, self._mode)

    def extra_repr(self):
        if self._mode == "constant":
            return f"padding={self.padding}, value={self.value}"
        return f"{self.padding}"


def _layer(name, dims, mode, doc, zero=False):
    def __init__(self, padding, *args):
        _PadNd.__init__(self, padding, *args)

    cls = type(name, (_PadNd,), {"_dims": dims, "_mode": mode, "__doc__": doc})
    if mode != "constant":
        cls.__init__ = lambda self, padding: _PadNd.__init__(self, padding)
    elif zero:
        cls.__init__ = lambda self, padding: _PadNd.__init__(self, padding, 0.0)
        cls.extra_repr = lambda self: f"{self.padding}"
    else:
        cls.__init__ = lambda self, padding, value: _PadNd.__init__(self, padding, value)
    cls.__module__ = __name__
    return cls


ConstantPad1d = _layer("ConstantPad1d", 1, "constant", "Pads the input tensor boundaries with a constant value.")
ConstantPad2d = _layer("ConstantPad2d", 2, "constant", "Pads the input tensor boundaries with a constant value.")
ConstantPad3d = _layer("ConstantPad3d", 3, "constant", "Pads the input tensor boundaries with a constant value.")
ZeroPad1d = _layer("ZeroPad1d", 1, "constant", "Pads the input tensor boundaries with zero.", zero=True)
ZeroPad2d = _layer("ZeroPad2d", 2, "constant", "Pads the input tensor boundaries with zero.", zero=True)
ZeroPad3d = _layer("ZeroPad3d", 3, "constant", "Pads the input tensor boundaries with zero.", zero=True)
ReflectionPad1d = _layer("ReflectionPad1d", 1, "reflect", "Pads the input tensor using the reflection of the input boundary.")
ReflectionPad2d = _layer("ReflectionPad2d", 2, "reflect", "Pads the input tensor using the reflection of the input boundary.")
ReflectionPad3d = _layer("ReflectionPad3d", 3, "reflect", "Pads the input tensor using the reflection of the input boundary.")
ReplicationPad1d = _layer("ReplicationPad1d", 1, "replicate", "Pads the input tensor using replication of the input boundary.")
ReplicationPad2d = _layer("ReplicationPad2d", 2, "replicate", "Pads the input tensor using replication of the input boundary.")
ReplicationPad3d = _layer("ReplicationPad3d", 3, "replicate", "Pads the input tensor using replication of the input boundary.")
CircularPad1d = _layer("CircularPad1d", 1, "circular", "Pads the input tensor using circular padding of the input boundary.")
CircularPad2d = _layer("CircularPad2d", 2, "circular", "Pads the input tensor using circular padding of the input boundary.")
CircularPad3d = _layer("CircularPad3d", 3, "circular", "Pads the input tensor using circular padding of the input boundary.")
