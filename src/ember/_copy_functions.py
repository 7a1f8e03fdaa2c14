"""torch's ``*_copy`` functions (``torch.t_copy``, ``torch.view_copy``, ...): the view op, then
a contiguous copy of it, so that the result shares no memory with the input. Gradients flow as
through the view and the copy."""
from ._tensor import Tensor
from .ops._common import method

__all__ = [
    "alias_copy", "as_strided_copy", "detach_copy", "diagonal_copy", "expand_copy",
    "narrow_copy", "permute_copy", "select_copy", "slice_copy", "split_copy",
    "split_with_sizes_copy", "squeeze_copy", "t_copy", "transpose_copy", "unbind_copy",
    "unfold_copy", "unsqueeze_copy", "view_copy", "view_as_real_copy", "view_as_complex_copy",
]


def _copy(view):
    from ._memory_format import contiguous_format
    return view.clone(memory_format=contiguous_format)


def _finish(result, out):
    from .ops._common import write_out
    return write_out(result, out)


def _input(input, name):
    if not isinstance(input, Tensor):
        raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, "
                        f"not {type(input).__name__}")
    return input


def view_copy(input, size_or_dtype, *, out=None):
    """A copy of ``input.view(size)`` (or of ``input.view(dtype)``)."""
    return _finish(_copy(_input(input, "view_copy").view(size_or_dtype)), out)


def view_as_real_copy(input, *, out=None):
    """A copy of ``view_as_real(input)``."""
    from .ops.complex import view_as_real
    return _finish(_copy(view_as_real(_input(input, "view_as_real_copy"))), out)


def view_as_complex_copy(input, *, out=None):
    """A copy of ``view_as_complex(input)``."""
    from .ops.complex import view_as_complex
    return _finish(_copy(view_as_complex(_input(input, "view_as_complex_copy"))), out)


def permute_copy(input, dims, *, out=None):
    """A copy of ``input.permute(dims)``."""
    return _finish(_copy(_input(input, "permute_copy").permute(*dims)), out)


def t_copy(input, *, out=None):
    """A copy of ``input.t()``."""
    return _finish(_copy(_input(input, "t_copy").t()), out)


def transpose_copy(input, dim0, dim1, *, out=None):
    """A copy of ``input.transpose(dim0, dim1)``."""
    return _finish(_copy(_input(input, "transpose_copy").transpose(dim0, dim1)), out)


def unsqueeze_copy(input, dim, *, out=None):
    """A copy of ``input.unsqueeze(dim)``."""
    return _finish(_copy(_input(input, "unsqueeze_copy").unsqueeze(dim)), out)


def squeeze_copy(input, dim=None, *, out=None):
    """A copy of ``input.squeeze(dim)`` (all dimensions of size 1 when ``dim`` is None)."""
    input = _input(input, "squeeze_copy")
    return _finish(_copy(input.squeeze() if dim is None else input.squeeze(dim)), out)


def select_copy(input, dim, index, *, out=None):
    """A copy of ``input.select(dim, index)``."""
    return _finish(_copy(_input(input, "select_copy").select(dim, index)), out)


def slice_copy(input, dim=0, start=None, end=None, step=1, *, out=None):
    """A copy of ``input``'s slice ``start:end:step`` along ``dim``."""
    input = _input(input, "slice_copy")
    if step <= 0:
        raise RuntimeError("slice step must be positive")
    dim = dim + input.dim() if dim < 0 else dim
    key = (slice(None),) * dim + (slice(start, end, step),)
    return _finish(_copy(input[key]), out)


def narrow_copy(input, dim, start, length, *, out=None):
    """A copy of ``input.narrow(dim, start, length)``."""
    return _finish(_copy(_input(input, "narrow_copy").narrow(dim, start, length)), out)


method("narrow_copy")(narrow_copy)


def split_copy(input, split_size, dim=0):
    """Copies of the pieces of ``input.split(split_size, dim)``."""
    return tuple(_copy(piece) for piece in _input(input, "split_copy").split(split_size, dim))


def split_with_sizes_copy(input, split_sizes, dim=0):
    """Copies of the pieces of :func:`ember.split_with_sizes`."""
    from ._tensor_functions import split_with_sizes
    return tuple(_copy(piece) for piece in
                 split_with_sizes(_input(input, "split_with_sizes_copy"), split_sizes, dim))


def unbind_copy(input, dim=0):
    """Copies of the slices of ``input.unbind(dim)``."""
    return tuple(_copy(piece) for piece in _input(input, "unbind_copy").unbind(dim))


def unfold_copy(input, dimension, size, step, *, out=None):
    """A copy of ``input.unfold(dimension, size, step)``."""
    return _finish(_copy(_input(input, "unfold_copy").unfold(dimension, size, step)), out)


def expand_copy(input, size, *, implicit=False, out=None):
    """A copy of ``input.expand(size)``: every element of the result has its own memory."""
    return _finish(_copy(_input(input, "expand_copy").expand(*size)), out)


def diagonal_copy(input, offset=0, dim1=0, dim2=1, *, out=None):
    """A copy of ``input.diagonal(offset, dim1, dim2)``."""
    return _finish(_copy(_input(input, "diagonal_copy").diagonal(offset, dim1, dim2)), out)


def detach_copy(input, *, out=None):
    """A copy of ``input.detach()``: the values, with no history."""
    return _finish(_copy(_input(input, "detach_copy").detach()), out)


def alias_copy(input, *, out=None):
    """A copy of ``input``."""
    return _finish(_copy(_input(input, "alias_copy")), out)


def as_strided_copy(input, size, stride, storage_offset=None, *, out=None):
    """A copy of ``input.as_strided(size, stride, storage_offset)``."""
    view = _input(input, "as_strided_copy").as_strided(size, stride, storage_offset)
    return _finish(_copy(view), out)
