"""Activations kept in the layout a oneDNN primitive chose (``nChw16c`` and the like) between
consecutive oneDNN ops, instead of being converted to the caller's layout after each op and
back before the next: torch does those conversions around each convolution; a model whose
convolutions, batch norms and activations all run here makes them only where something else
reads the data.

A ``BlockedArray`` is such an activation: its ``Layout`` (the memory descriptor, the shape and
dtype, and the layout the caller would have been given) and a byte buffer. ``plain()``
converts it into an ordinary NumPy array. Elementwise ops that map 0 to 0 run over
``values()``, the buffer as a flat array, padding included (a primitive writes zeros into the
padding of the blocks it pads, and these keep them), and wrap the result with ``like``. The
tensor that holds one is ``ember._blocked_tensor.BlockedTensor``.
"""
import ctypes

import numpy as np

from . import capi
from .capi import call
from ..._memory_format import empty_as
from ..pointers import address

__all__ = ["Layout", "BlockedArray", "same_layout", "plain_array", "converted"]


class Layout:
    """A oneDNN memory descriptor (owned: a clone of the primitive's) for arrays of ``shape``
    and ``dtype``, and the plain layout they stand for (memory format ``fmt``, described by
    ``user_md``). ``key`` names the layout in plan caches: equal keys mean equal descriptors
    (it is the key of the plan that chose the layout and the argument)."""
    __slots__ = ("md", "shape", "dtype", "fmt", "plain_key", "user_md", "nbytes", "key",
                 "_owner", "_destroy")

    def __init__(self, md, shape, dtype, fmt, plain_key, user_md, nbytes, key, owner):
        handle = ctypes.c_void_p()
        call("dnnl_memory_desc_clone", ctypes.byref(handle), md)
        self.md = handle.value
        self._destroy = capi.lib().dnnl_memory_desc_destroy
        self.shape, self.dtype, self.fmt = shape, dtype, fmt
        self.plain_key, self.user_md, self.nbytes, self.key = plain_key, user_md, nbytes, key
        self._owner = owner   # the plan that owns ``user_md``

    def __del__(self):
        if self.md:
            self._destroy(self.md)


class BlockedArray:
    """An array of ``layout.shape`` held in ``layout``'s oneDNN layout in ``buffer`` (bytes)."""
    __slots__ = ("layout", "buffer")

    def __init__(self, layout, buffer):
        self.layout, self.buffer = layout, buffer

    @property
    def shape(self):
        return self.layout.shape

    @property
    def dtype(self):
        return self.layout.dtype

    @property
    def ndim(self):
        return len(self.layout.shape)

    @property
    def size(self):
        return int(np.prod(self.layout.shape))

    @property
    def itemsize(self):
        return self.layout.dtype.itemsize

    @property
    def nbytes(self):
        return self.size * self.itemsize

    def values(self):
        """The buffer as a flat array of the elements' dtype (padding included)."""
        return self.buffer.view(self.layout.dtype)

    def like(self, values):
        """``values`` (a flat array as ``values()`` gives) in this array's layout."""
        return BlockedArray(self.layout, values.view(np.uint8))

    def plain(self):
        """A NumPy array of the same values in the plain layout (by a reorder from the plan
        cache, so that a forked child or another thread count runs one made for it)."""
        from .runtime import _reorder, plans, run_reorder
        layout = self.layout

        def make():
            return _Conversion(_reorder(layout.md, layout.user_md, "a plain array"), layout)
        conversion = plans.get(("plain", layout.key), make)
        out = empty_as(np, layout.shape, layout.dtype, layout.fmt)
        run_reorder(conversion.reorder, layout.md, address(self.buffer), layout.user_md,
                    address(out))
        return out


def same_layout(a, b):
    """Whether the blocked arrays ``a`` and ``b`` hold the same shape in the same layout (so
    that an elementwise op may run over their buffers)."""
    la, lb = a.layout, b.layout
    return la is lb or (la.shape == lb.shape and la.dtype == lb.dtype
                        and bool(capi.lib().dnnl_memory_desc_equal(la.md, lb.md)))


def plain_array(array):
    """``array`` as an ordinary array: a ``BlockedArray`` converted, anything else itself."""
    return array.plain() if array.__class__ is BlockedArray else array


class _Conversion:
    """A cached reorder from one layout (a plain array's or a blocked one's) into another,
    with the source's descriptor (kept alive with it)."""
    __slots__ = ("reorder", "src_md", "key")

    def __init__(self, reorder, src_md):
        self.reorder, self.src_md, self.key = reorder, src_md, None


def convert_into(array, dst_md, dst_key, buffer):
    """Write ``array`` (a NumPy array, or a ``BlockedArray``) into ``buffer`` in the layout
    ``dst_md`` (named ``dst_key`` in the plan cache), by one cached reorder. False where
    oneDNN cannot read ``array``."""
    from .runtime import MemoryDesc, _reorder, describable, layout_key, plans, run_reorder
    if array.__class__ is BlockedArray:
        source, pointer = array.layout, array.buffer
        key = ("convert", source.key, dst_key)

        def make():
            return _Conversion(_reorder(source.md, dst_md, "a layout conversion"), source)
    else:
        if type(array) is not np.ndarray:
            return False
        if not describable(array):
            array = np.ascontiguousarray(array)   # a broadcast view (a sum's gradient)
        pointer = array
        key = ("convert", layout_key(array), dst_key)

        def make():
            md = MemoryDesc.of(array)
            return _Conversion(_reorder(md.handle, dst_md, "a layout conversion"), md)
    conversion = plans.get(key, make)
    src_md = conversion.src_md
    run_reorder(conversion.reorder, src_md.md if src_md.__class__ is Layout else src_md.handle,
                address(pointer), dst_md, address(buffer))
    return True


def converted(array, layout):
    """``array`` (a NumPy array of ``layout``'s shape and dtype, or a ``BlockedArray`` in
    another layout) as a ``BlockedArray`` in ``layout``: one reorder, where converting both
    operands of an elementwise op to the plain layout would take two. None where oneDNN
    cannot read ``array``."""
    if array.shape != layout.shape or array.dtype != layout.dtype:
        return None
    buffer = np.empty(layout.nbytes, np.uint8)
    if not convert_into(array, layout.md, layout.key, buffer):
        return None
    return BlockedArray(layout, buffer)
