"""Memory formats, as torch's: ``contiguous_format`` (row-major), ``channels_last`` (NHWC
strides for a 4-D NCHW tensor), ``channels_last_3d`` (NDHWC for 5-D) and ``preserve_format``
(keep the input's strides where they are dense). A format is a tensor's strides, nothing else:
the tensor's shape and values stay NCHW."""

__all__ = ["memory_format", "contiguous_format", "channels_last", "channels_last_3d",
           "preserve_format", "legacy_contiguous_format"]


class memory_format:
    """The memory format of a tensor's strides (``ember.channels_last``, ...)."""
    __slots__ = ("name", "rank")

    def __init__(self, name, rank=None):
        self.name, self.rank = name, rank

    def __repr__(self):
        return f"ember.{self.name}"

    def __reduce__(self):
        return self.name


contiguous_format = memory_format("contiguous_format")
channels_last = memory_format("channels_last", 4)
channels_last_3d = memory_format("channels_last_3d", 5)
preserve_format = memory_format("preserve_format")
legacy_contiguous_format = contiguous_format  # torch's alias, kept for old code


def _order(rank):
    """The dims of an N, C, *spatial array from the fastest-varying: C, then the spatial
    dims from the last, then N."""
    return (1,) + tuple(range(rank - 1, 1, -1)) + (0,)


def is_contiguous_as(array, fmt):
    """Whether ``array``'s strides are ``fmt``'s (dims of size 1 are ignored, as torch does)."""
    if fmt is contiguous_format or fmt is None:
        return array.flags.c_contiguous
    if fmt is preserve_format:
        raise RuntimeError("preserve memory format is unsupported by the contiguous operator")
    if array.ndim != fmt.rank:
        return False
    expected = array.itemsize
    for d in _order(array.ndim):
        if array.shape[d] != 1:
            if array.strides[d] != expected:
                return False
            expected *= array.shape[d]
    return True


def dense_strides(shape, fmt):
    """The strides, in elements, of a dense array of ``shape`` in ``fmt`` (row-major or a
    channels-last format), every dimension's included: an array dense in ``fmt`` is laid out
    so whatever the strides NumPy gives its dimensions of size 1."""
    order = range(len(shape) - 1, -1, -1) if fmt.rank is None else _order(len(shape))
    strides = [0] * len(shape)
    step = 1
    for d in order:
        strides[d] = step
        step *= shape[d]
    return tuple(strides)


def check_rank(array, fmt):
    if fmt.rank is not None and array.ndim != fmt.rank:
        raise RuntimeError(f"required rank {fmt.rank} tensor to use {fmt.name} format")


def empty_as(xp, shape, dtype, fmt):
    """An uninitialized array of ``shape`` whose strides are ``fmt``'s (a channels-last
    format: the array allocated in N, *spatial, C order, seen as N, C, *spatial)."""
    if fmt.rank is None:
        return xp.empty(shape, dtype=dtype)
    order = tuple(reversed(_order(len(shape))))  # slowest first
    base = xp.empty(tuple(shape[d] for d in order), dtype=dtype)
    return base.transpose(tuple(order.index(d) for d in range(len(shape))))


def copy_as(array, fmt):
    """A copy of ``array`` in ``fmt`` (``preserve_format``: its own strides where they are dense
    and non-overlapping, else row-major, as NumPy's order 'K' copy gives)."""
    if fmt is preserve_format:
        return array.copy(order="K")
    if fmt is contiguous_format or fmt is None:
        return array.copy()
    from ._backend import namespace_of
    check_rank(array, fmt)
    out = empty_as(namespace_of(array), array.shape, array.dtype, fmt)
    out[...] = array
    return out


def laid_out_like(array, like):
    """``array`` with ``like``'s strides (a copy where they differ): a loop over both arrays'
    memory then meets the same element at the same offset. Both are arrays of one shape."""
    if array.strides == like.strides:
        return array
    from ._backend import namespace_of
    out = namespace_of(like).empty_like(like, dtype=array.dtype)
    out[...] = array
    return out


def suggest(array):
    """The format torch suggests for an array: channels-last where its strides are, else
    row-major."""
    for fmt in (channels_last, channels_last_3d):
        if array.ndim == fmt.rank and not array.flags.c_contiguous and is_contiguous_as(array, fmt):
            return fmt
    return contiguous_format
