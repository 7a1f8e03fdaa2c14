"""torch's functions that repeat a Tensor method or ask a tensor a question (``torch.detach``,
``torch.is_nonzero``, ``torch.positive``, ``torch.split_with_sizes``, ...), the deprecated
``torch.range`` and ``torch.chain_matmul``, and ``torch.typename``."""
import math
import warnings

from . import _dtype
from ._tensor import Tensor
from .ops._common import method, write_out

__all__ = [
    "chain_matmul", "detach", "diagflat", "get_device", "is_conj", "is_inference", "is_neg",
    "is_nonzero", "is_same_size", "is_signed", "matrix_power", "pinverse", "positive", "range",
    "split_with_sizes", "typename", "unsafe_chunk", "unsafe_split", "unsafe_split_with_sizes",
]

_builtin_range = range


def _tensor_argument(input, name, position=1, argument="input"):
    if not isinstance(input, Tensor):
        raise TypeError(f"{name}(): argument '{argument}' (position {position}) must be Tensor, "
                        f"not {type(input).__name__}")


def detach(input):
    """A new tensor sharing ``input``'s memory, detached from the graph."""
    _tensor_argument(input, "detach")
    return input.detach()


def get_device(input):
    """The index of the device ``input`` is on; -1 for the CPU."""
    _tensor_argument(input, "get_device")
    return input.get_device()


def is_signed(input):
    """True if ``input``'s dtype is a signed type."""
    _tensor_argument(input, "is_signed")
    return input.is_signed()


def is_inference(input):
    """True if ``input`` was made in inference mode."""
    _tensor_argument(input, "is_inference")
    return input.is_inference()


@method()
def is_nonzero(input):
    """True if the single element of ``input`` is not zero (``False`` for ``0``, ``0.0`` and
    ``False``); a tensor of more or fewer elements is refused."""
    _tensor_argument(input, "is_nonzero")
    n = input.numel()
    if n == 0:
        raise RuntimeError("Boolean value of Tensor with no values is ambiguous")
    if n > 1:
        raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
    return bool(input._data.reshape(-1)[0])


@method()
def is_same_size(input, other):
    """True if ``input`` and ``other`` have the same shape."""
    _tensor_argument(input, "is_same_size")
    _tensor_argument(other, "is_same_size", 2, "other")
    return tuple(input.shape) == tuple(other.shape)


@method()
def is_conj(input):
    """True if ``input`` is a lazily conjugated view; ember conjugates eagerly, so never."""
    _tensor_argument(input, "is_conj")
    return False


@method()
def is_neg(input):
    """True if ``input`` is a lazily negated view; ember negates eagerly, so never."""
    _tensor_argument(input, "is_neg")
    return False


@method()
def positive(input):
    """``input`` itself (unary plus); refused for bool tensors, as torch refuses them."""
    _tensor_argument(input, "positive")
    if input._data.dtype == bool:
        raise RuntimeError("The `+` operator, on a bool tensor is not supported.")
    return input


def matrix_power(input, n, *, out=None):
    """:func:`ember.linalg.matrix_power`."""
    from .linalg import matrix_power as power
    return power(input, n, out=out)


@method("matrix_power")
def _matrix_power(input, n):
    from .linalg import _matrix_power as power
    return power(input, n)


def pinverse(input, rcond=1e-15):
    """The pseudo-inverse of ``input``, singular values below ``rcond`` times the largest
    taken as zero."""
    _tensor_argument(input, "pinverse")
    return input.pinverse(rcond)


@method()
def diagflat(input, offset=0):
    """The 2-D tensor with the flattened ``input`` on its ``offset``-th diagonal."""
    from .ops.shape import diag
    return diag(input.reshape(-1), offset)


def chain_matmul(*matrices, out=None):
    """The matrix product of the 2-D ``matrices`` (deprecated: use
    :func:`ember.linalg.multi_dot`); of a single matrix, a copy of it."""
    warnings.warn("torch.chain_matmul is deprecated and will be removed in a future PyTorch "
                  "release. Use torch.linalg.multi_dot instead, which accepts a list of two or "
                  "more tensors rather than multiple parameters.", UserWarning, stacklevel=2)
    if not matrices:
        raise RuntimeError("chain_matmul(): Expected one or more input tensors")
    for t in matrices:
        if t.dim() != 2:
            raise RuntimeError(f"Tensor dimension is {t.dim()}, expected 2 instead.")
    if len(matrices) == 1:
        result = matrices[0].clone()
    else:
        from .linalg import multi_dot
        result = multi_dot(matrices)
    return write_out(result, out)


@method()
def split_with_sizes(input, split_sizes, dim=0):
    """Splits ``input`` along ``dim`` into views of the sizes in ``split_sizes``."""
    from .ops.view import split
    split_sizes = [int(s) for s in split_sizes]
    size = input.shape[dim]
    if sum(split_sizes) != size or any(s < 0 for s in split_sizes):
        raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {size} "
                           f"(input tensor's size at dimension {dim}), but got "
                           f"split_sizes={split_sizes}")
    return split(input, split_sizes, dim)


def unsafe_split(input, split_size, dim=0):
    """:func:`ember.split` into chunks of ``split_size``."""
    from .ops.view import split
    return tuple(split(input, int(split_size), dim))


def unsafe_split_with_sizes(input, split_sizes, dim=0):
    """:func:`split_with_sizes`."""
    return tuple(split_with_sizes(input, split_sizes, dim))


def unsafe_chunk(input, chunks, dim=0):
    """:func:`ember.chunk`."""
    from .ops.view import chunk
    return tuple(chunk(input, chunks, dim))


def range(start=0, end=None, step=1, *, dtype=None, layout=None, device=None,
          requires_grad=False, out=None):
    """Values from ``start`` to ``end`` *inclusive*, spaced by ``step``, in the default float
    dtype unless ``dtype`` is given (deprecated: use :func:`ember.arange`, whose end is
    exclusive)."""
    warnings.warn("torch.range is deprecated and will be removed in a future release because its "
                  "behavior is inconsistent with Python's range builtin. Instead, use "
                  "torch.arange, which produces values in [start, end).", UserWarning,
                  stacklevel=2)
    from .ops.creation import arange, tensor
    if end is None:
        raise TypeError("range() missing required argument 'end' (pos 2)")
    start, end, step = (float(v) if isinstance(v, Tensor) else v for v in (start, end, step))
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if (step > 0 and end < start) or (step < 0 and end > start):
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    count = int(math.floor((end - start) / step)) + 1
    dtype = _dtype.get_default_dtype() if dtype is None else dtype
    if count and dtype.is_floating_point:
        values = arange(count, dtype=_dtype.float64) * step + start
        result = values.to(dtype)
    else:
        result = tensor([start + step * i for i in _builtin_range(count)], dtype=dtype)
    if device is not None:
        result = result.to(device)
    if requires_grad:
        result.requires_grad_()
    return write_out(result, out)


def typename(obj, /):
    """The fully qualified name of ``obj``'s type (``'torch.FloatTensor'`` for a float32
    tensor, ``'ember.nn.parameter.Parameter'`` for a class)."""
    from .nn.modules.module import _typename  # the one Module's reprs use
    return _typename(obj)
