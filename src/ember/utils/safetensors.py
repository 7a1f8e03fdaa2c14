"""Reading and writing the safetensors format (``save_file``/``load_file``, ``save``/``load``),
through the ``safetensors`` package's NumPy API: no pickle, so loading runs no code.

Arrays are made contiguous before saving: safetensors 0.8.0 writes wrong values for
non-contiguous NumPy arrays. bfloat16 travels as ``ml_dtypes.bfloat16``.
"""
import numpy as np

from .._backend import backend_of
from .._tensor import Tensor, _make

__all__ = ["save_file", "load_file", "save", "load"]


def _safetensors_numpy():
    try:
        from safetensors import numpy as st_numpy
    except ImportError as exc:
        raise ImportError("ember.utils.safetensors needs the 'safetensors' package "
                          "(pip install safetensors)") from exc
    return st_numpy


def _arrays(tensors):
    """Name -> contiguous host array, checked to be a dict of tensors."""
    if not isinstance(tensors, dict):
        raise TypeError(f"Expected a dict of [str, ember.Tensor] but received {type(tensors).__name__}")
    arrays = {}
    for name, tensor in tensors.items():
        if not isinstance(tensor, Tensor):
            raise TypeError(f"Key `{name}` is invalid, expected ember.Tensor but received "
                            f"{type(tensor).__name__}")
        arrays[name] = np.ascontiguousarray(backend_of(tensor._data).to_host(tensor._data))
    return arrays


def _tensors(arrays, device):
    out = {}
    for name, array in arrays.items():
        if not array.flags.writeable:
            array = array.copy()
        tensor = _make(array)
        out[name] = tensor if str(device) == "cpu" else tensor.to(device)
    return out


def save_file(tensors, filename, metadata=None):
    """Saves a dict of tensors to ``filename`` in the safetensors format; ``metadata`` is an
    optional dict of str -> str stored in the header."""
    _safetensors_numpy().save_file(_arrays(tensors), str(filename), metadata=metadata)


def load_file(filename, device="cpu"):
    """Loads a safetensors file into a dict of name -> tensor, on ``device``."""
    return _tensors(_safetensors_numpy().load_file(str(filename)), device)


def save(tensors, metadata=None):
    """The safetensors bytes of a dict of tensors."""
    return _safetensors_numpy().save(_arrays(tensors), metadata=metadata)


def load(data):
    """A dict of name -> tensor from safetensors bytes."""
    return _tensors(_safetensors_numpy().load(data), "cpu")
