"""``ember.types``: the type aliases torch.types gives annotations (``Number``, ``Device``,
``FileLike``, ``Storage``, and the private ``_size``, ``_TensorOrTensors``, ... that code
written for torch imports). ember has no symbolic sizes, so ``IntLikeType`` is ``int`` (and so
on) and there are no ``SymInt`` types."""
import os
from builtins import (  # noqa: F401
    bool as _bool, bytes as _bytes, complex as _complex, float as _float, int as _int,
    str as _str,
)
from collections.abc import Sequence
from typing import IO

from ._device import device as _device
from ._dtype import dtype as _dtype
from ._layout import layout as _layout  # noqa: F401
from ._tensor import Size, Tensor

__all__ = ["Number", "Device", "FileLike", "Storage"]

_TensorOrTensors = Tensor | Sequence[Tensor]
_TensorOrOptionalTensors = Tensor | Sequence[Tensor | None]
_size = Size | list[int] | tuple[int, ...]
_symsize = Size | Sequence[int]

IntLikeType = int
FloatLikeType = float
BoolLikeType = bool

Number = int | float | bool
_Number = (int, float, bool)
FileLike = str | os.PathLike | IO[bytes]
Device = _device | str | int | None


class Storage:
    """The type of a tensor's storage, for annotations: what it holds (``device``,
    ``dtype``)."""

    device: _device
    dtype: _dtype
