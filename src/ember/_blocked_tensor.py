"""Tensors whose data is still in the layout a oneDNN primitive chose (a ``BlockedArray``:
``ember._backend.onednn.blocked``), converted to an ordinary array the first time anything
reads it.

Ops that run on oneDNN's layouts (convolutions, batch norm, the activations and additions
between them) take the ``BlockedArray`` of such a tensor as it is (``blocked_array``) and give
their results as such tensors (``make_blocked``), so a model's activations stay in the
primitives' layout from one convolution to the next, in the forward and in the backward.
Everything else reads ``_data``, as for any tensor: the first read converts the data, and the
tensor becomes a plain ``Tensor`` for good. Its metadata (shape, dtype, device) are answered
without converting. Aliases (``detach``, a node's saved output) share one ``_Held``, so the
data is converted once and seen by all of them.
"""
from ._backend.onednn.blocked import BlockedArray, converted, same_layout
from ._device import device as _device
from ._dtype import from_numpy_dtype
from ._layout import strided as _strided
from ._tensor import Size, Tensor, _make, _new, _wrap_dim
from ._torch_function import _disabled_torch_function_impl

__all__ = ["BlockedTensor", "make_blocked", "blocked_array", "blocked_or_data", "wrap_like",
           "elementwise_operands"]

_DATA = Tensor.__dict__["_data"]   # the slot Tensor keeps its array in
_CPU = _device("cpu")


class _Held:
    """The data of a ``BlockedTensor`` and of its aliases: the blocked array until one of them
    is read as a plain array, then that array."""
    __slots__ = ("array", "plain")

    def __init__(self, array):
        self.array, self.plain = array, None

    def meta(self):
        return self.array if self.plain is None else self.plain


class BlockedTensor(Tensor):
    """A ``Tensor`` whose data is a ``BlockedArray`` until it is read."""
    __slots__ = ()
    # an ordinary tensor to the ``__torch_function__`` protocol: no override, no dispatch
    __torch_function__ = _disabled_torch_function_impl

    @property
    def _data(self):
        held = self.__dict__.pop("_held", None)
        if held is None:   # another thread converted it meanwhile
            return _DATA.__get__(self)
        data = held.plain
        if data is None:
            data = held.plain = held.array.plain()
            held.array = None
        _DATA.__set__(self, data)
        self.__class__ = Tensor
        return data

    @_data.setter
    def _data(self, value):
        self.__dict__.pop("_held", None)
        _DATA.__set__(self, value)
        self.__class__ = Tensor

    def _alias(self):
        t = _new(BlockedTensor)
        t.__dict__["_held"] = self.__dict__["_held"]
        t._requires_grad = False
        t.grad_fn = None
        t._version_counter = self._version_counter
        return t

    # -- metadata, without converting ------------------------------------------------------
    @property
    def dtype(self):
        return from_numpy_dtype(self.__dict__["_held"].meta().dtype)

    @property
    def shape(self):
        return Size(self.__dict__["_held"].meta().shape)

    def size(self, dim=None):
        shape = self.__dict__["_held"].meta().shape
        if dim is None:
            return Size(shape)
        return shape[_wrap_dim(dim, len(shape))]

    @property
    def ndim(self):
        return len(self.__dict__["_held"].meta().shape)

    def dim(self):
        return len(self.__dict__["_held"].meta().shape)

    def numel(self):
        return self.__dict__["_held"].meta().size

    @property
    def device(self):
        return _CPU

    @property
    def layout(self):
        return _strided

    @property
    def is_sparse(self):
        return False

    @property
    def is_sparse_csr(self):
        return False

    @property
    def is_meta(self):
        return False

    def is_floating_point(self):
        return True   # oneDNN's layouts hold float32 here

    def is_complex(self):
        return False


BlockedTensor.__name__ = BlockedTensor.__qualname__ = "Tensor"


def make_blocked(array):
    """A tensor holding ``array`` (a ``BlockedArray``), or an ordinary one for a NumPy array."""
    if array.__class__ is not BlockedArray:
        from ._tensor import _make
        return _make(array)
    t = _new(BlockedTensor)
    t.__dict__["_held"] = _Held(array)
    t._requires_grad = False
    t.grad_fn = None
    t._version_counter = [0]
    return t


def blocked_array(t):
    """``t``'s ``BlockedArray`` if its data is still one, else None."""
    if t.__class__ is BlockedTensor:
        held = t.__dict__.get("_held")
        if held is not None:
            return held.array
    return None


def blocked_or_data(t):
    """``t``'s ``BlockedArray`` if its data is still one, else its array."""
    array = blocked_array(t)
    return t._data if array is None else array


def wrap_like(layout_of, values):
    """A tensor of the flat ``values`` in the layout of the blocked array ``layout_of``; an
    ordinary tensor of ``values`` where ``layout_of`` is None."""
    if layout_of is None:
        return _make(values)
    return make_blocked(layout_of.like(values))


def elementwise_operands(*tensors):
    """``(arrays, layout_of)`` for an elementwise op that maps 0 to 0 over ``tensors``: where
    one of them is held in a oneDNN layout, all of them in that layout (the others converted
    into it) as flat arrays, and a blocked array to give the result to ``wrap_like`` with;
    else their arrays and None."""
    for t in tensors:
        if t.__class__ is BlockedTensor:
            break
    else:   # (the common case: no blocked array to look for)
        return tuple([t._data for t in tensors]), None
    blocked = [blocked_array(t) for t in tensors]
    target = next((b for b in blocked if b is not None), None)
    if target is not None:
        arrays = []
        for t, b in zip(tensors, blocked):
            if b is None or not same_layout(b, target):
                b = converted(t._data if b is None else b, target.layout)
                if b is None:
                    break
            arrays.append(b.values())
        else:
            return tuple(arrays), target
    return tuple(t._data for t in tensors), None
