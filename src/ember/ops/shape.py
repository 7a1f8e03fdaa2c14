"""Shape and composition ops: cat/concat/concatenate, stack, hstack, vstack, dstack,
column_stack, row_stack, tensor_split, hsplit, vsplit, dsplit, flip, fliplr, flipud, roll, rot90,
repeat, tile, repeat_interleave, tril, triu (and tril_/triu_), tril_indices, triu_indices,
broadcasting (broadcast_to, broadcast_tensors, broadcast_shapes), meshgrid, cartesian_prod,
combinations, atleast_1d/2d/3d, diag, diag_embed, trace, diagonal_scatter, select_scatter,
slice_scatter, block_diag, kron, cross, as_strided (a view) and ravel."""
import functools
import itertools
import math

import numpy as np

from .. import _dtype
from .._backend import openmp_kernels
from .._backend.choice import KernelChoice
from .._dtype import _BY_NP, _PROMOTE
from ._common import (
    complex_autograd,
    apply_inplace, AsStridedBackward0, bump_version, check_inplace, check_tensor, forward_mode, grad_state,
    inplace_untracked,
    KeyRegion,
    make, make_view, method,
    namespace_of, Node, normalize_dims, record, Size, take_view, Tensor, _type_word, warn_once, wrap_dim, write_out,
)
from . import _compiled_functions
from .creation import zeros
from .view import _diagonal_data, _diagonal_dims, _storage_root
from ..amp.policy import autocast_policy
from .ternary import _SAME_SIZE_INTEGER
from ..autograd._dual import jvp_by_transposition
from .._torch_function import _switch as _dispatch, override_or_raise
from ..autograd.grad_mode import no_grad

__all__ = ["cat", "concat", "concatenate", "stack", "hstack", "vstack", "flip", "fliplr",
           "flipud", "roll", "repeat", "tile", "tril", "triu"]


def _tensor_list(tensors, op):
    if isinstance(tensors, Tensor) or not isinstance(tensors, (list, tuple)):
        raise TypeError(f"{op}(): argument 'tensors' (position 1) must be tuple of Tensors, not "
                        f"{type(tensors).__name__}")
    for i, t in enumerate(tensors):
        if t.__class__ is not Tensor and not isinstance(t, Tensor):
            raise TypeError(f"expected Tensor as element {i} in argument 0, but got {type(t).__name__}")
    return list(tensors)


def _common_dtype(tensors):
    dt = tensors[0].dtype
    for t in tensors[1:]:
        if t.dtype is not dt:
            dt = _PROMOTE[(dt, t.dtype)]
    return dt


def _grad_for(grad, np_dtype):
    """``grad`` cast to an input's dtype (inputs of a promoted cat or stack)."""
    if grad._data.dtype != np_dtype:
        return grad.to(_BY_NP[np_dtype])
    return grad


def _record_list(node_cls, tensors, out):
    node = record(node_cls, tensors, out)
    if node is not None:
        node.dtypes = [t._data.dtype for t in tensors]
    return node


# -- cat / stack ------------------------------------------------------------------------------

class CatBackward0(Node):
    __slots__ = ()
    saved_fields = {"dim": "dim"}

    def jvp(self, *tangents):   # the tangents concatenated as the inputs were
        return cat(_tangents_or_zeros(self.primals, tangents), self.dim)

    def backward(self, grad):
        from .view import split
        pieces = iter(split(grad, self.sizes, self.dim))
        xp = namespace_of(grad._data)
        return tuple(_grad_for(next(pieces), dtype) if used else make(xp.zeros((0,), dtype))
                     for used, dtype in zip(self.used, self.dtypes))


def _check_cat_shapes(arrays, dim, positions):
    """torch's errors for arrays that differ in rank or in a size other than ``dim``'s;
    ``positions``: each array's place in the list the caller was given."""
    first = arrays[0].shape
    for i, a in zip(positions[1:], arrays[1:]):
        shape = a.shape
        if len(shape) != len(first):
            raise RuntimeError(f"Tensors must have same number of dimensions: got {len(first)} and "
                               f"{len(shape)}")
        for d, (a, b) in enumerate(zip(first, shape)):
            if d != dim and a != b:
                raise RuntimeError(f"Sizes of tensors must match except in dimension {dim}. Expected "
                                   f"size {a} but got size {b} for tensor number {i} in the list.")


@autocast_policy("promote")
def cat(tensors, dim=0, *, out=None):
    """Concatenates ``tensors`` along ``dim`` (all of the same shape except in ``dim``);
    1-d empty tensors are skipped, as torch's legacy rule has it."""
    return _cat_entry[0](tensors, dim) if out is None else _cat(tensors, dim, out=out)


def _cat(tensors, dim=0, *, out=None):
    """``cat`` in every case its compiled function (``_compiled_functions``) leaves to Python."""
    try:
        tensors = _tensor_list(tensors, "cat")
        if not tensors:
            raise ValueError("ember.cat(): expected a non-empty list of Tensors")
        arrays = [t._data for t in tensors]
        first_dtype = arrays[0].dtype
        one_dtype = True
        skipped = False
        for i, data in enumerate(arrays):
            if not data.ndim:
                raise RuntimeError(f"zero-dimensional tensor (at position {i}) cannot be concatenated")
            if data.dtype != first_dtype:
                one_dtype = False
            if data.shape == _EMPTY_VECTOR:
                skipped = True
        used = None   # (every tensor is used)
        positions = range(len(arrays))
        if skipped:
            used = [data.shape != _EMPTY_VECTOR for data in arrays]
            positions = [i for i, u in enumerate(used) if u] or [0]
            used[positions[0]] = True
            arrays = [arrays[i] for i in positions]
        dim = wrap_dim(dim, arrays[0].ndim)
        if not one_dtype:
            np_dtype = _common_dtype(tensors).np
            arrays = [a.astype(np_dtype, copy=False) for a in arrays]
        try:
            joined = namespace_of(arrays[0]).concatenate(arrays, axis=dim)
        except ValueError:   # ranks or sizes that differ: torch's message
            _check_cat_shapes(arrays, dim, positions)
            raise
        out_t = make(joined)
        node = _record_list(CatBackward0, tensors, out_t)
        if node is not None:
            node.dim, node.used = dim, used or [True] * len(tensors)
            node.sizes = [a.shape[dim] for a in arrays]
        return _into(out, out_t)
    except (AttributeError, TypeError) as error:   # a tensor-like argument's override
        return override_or_raise(cat, error, tensors, dim, out=out)


_cat_entry = _compiled_functions.register(_cat, CatBackward0, kind="cat")
_EMPTY_VECTOR = (0,)   # the shape of the 1-d empty tensors cat skips


concat = concatenate = cat


def _into(out, result, exact=False, op="cat"):
    """Write ``result`` into the ``out=`` tensor (see ``write_out``): any dtype it casts to,
    else torch's TypeError (cat, stack), or ``exact``ly its dtype."""
    if out is None:
        return result
    if not exact and isinstance(out, Tensor) and not _dtype.can_cast(
            _dtype.from_numpy_dtype(result._data.dtype), _dtype.from_numpy_dtype(out._data.dtype)):
        raise TypeError(f"torch.{op}(): input types can't be cast to the desired output type "
                        f"{_type_word(out._data.dtype)}")
    return write_out(result, out, exact, op)


def _tangents_or_zeros(inputs, tangents):
    from .creation import zeros_like
    return [zeros_like(x) if t is None else t for x, t in zip(inputs, tangents)]


class StackBackward0(Node):
    __slots__ = ()
    saved_fields = {"dim": "dim"}

    def jvp(self, *tangents):
        return stack(_tangents_or_zeros(self.primals, tangents), self.dim)

    def backward(self, grad):
        from .view import unbind
        pieces = unbind(grad, self.dim)
        return tuple(_grad_for(g, dtype) for g, dtype in zip(pieces, self.dtypes))


@autocast_policy("promote")
def stack(tensors, dim=0, *, out=None):
    """Concatenates ``tensors`` (all of the same shape) along a new dimension ``dim``."""
    return _stack_entry[0](tensors, dim) if out is None else _stack(tensors, dim, out=out)


def _stack(tensors, dim=0, *, out=None):
    """``stack`` in every case its compiled function (``_compiled_functions``) leaves to Python."""
    try:
        tensors = _tensor_list(tensors, "stack")
        if not tensors:
            raise RuntimeError("stack expects a non-empty TensorList")
        arrays = [t._data for t in tensors]
        first = arrays[0].shape
        dtype = arrays[0].dtype
        dim = wrap_dim(dim, len(first) + 1)   # torch checks the dim before the sizes
        one_dtype = True
        for i, a in enumerate(arrays):
            if a.shape != first:
                raise RuntimeError(f"stack expects each tensor to be equal size, but got {list(first)} at "
                                   f"entry 0 and {list(a.shape)} at entry {i}")
            if a.dtype != dtype:
                one_dtype = False
        if not one_dtype:
            np_dtype = _common_dtype(tensors).np
            arrays = [a.astype(np_dtype, copy=False) for a in arrays]
        xp = namespace_of(arrays[0])
        if dim < len(first):   # joined along ``dim``, whose sizes the reshape then splits in two
            joined = xp.concatenate(arrays, axis=dim).reshape(first[:dim] + (len(arrays),) + first[dim:])
        else:
            joined = xp.concatenate([a[..., None] for a in arrays], axis=dim)
        out_t = make(joined)
        node = _record_list(StackBackward0, tensors, out_t)
        if node is not None:
            node.dim = dim
        return _into(out, out_t)
    except (AttributeError, TypeError) as error:   # a tensor-like argument's override
        return override_or_raise(stack, error, tensors, dim, out=out)


_stack_entry = _compiled_functions.register(_stack, StackBackward0, kind="stack")


def _at_least(t, ndim):
    shape = t._data.shape
    if len(shape) >= ndim:
        return t
    return t.reshape((1,) * (ndim - len(shape)) + shape)


def _plain_tensors(tensors, ndim=0):
    """Whether ``tensors`` is a non-empty list or tuple of Tensors (which the stacking functions give
    ``cat``'s compiled function at once, each with the dims they need), each of ``ndim`` dims or more."""
    if tensors.__class__ not in (list, tuple) or not tensors:
        return False
    for t in tensors:
        if t.__class__ is not Tensor or t._data.ndim < ndim:
            return False
    return True


def hstack(tensors, *, out=None):
    """Stacks ``tensors`` horizontally: along dim 1, or dim 0 for 1-d tensors."""
    if out is None and _plain_tensors(tensors, 1):
        return _cat_entry[0](tensors, 0 if tensors[0]._data.ndim == 1 else 1)
    if out is None and _plain_tensors(tensors):
        tensors = [_at_least(t, 1) for t in tensors]
        return _cat_entry[0](tensors, 0 if tensors[0]._data.ndim == 1 else 1)
    tensors = [_at_least(t, 1) for t in _tensor_list(tensors, "hstack")]
    dim = 0 if tensors and tensors[0]._data.ndim == 1 else 1
    return cat(tensors, dim, out=out)


def vstack(tensors, *, out=None):
    """Stacks ``tensors`` vertically (along dim 0), 1-d tensors as rows."""
    if out is None and _plain_tensors(tensors, 2):
        return _cat_entry[0](tensors, 0)
    if out is None and _plain_tensors(tensors):
        return _cat_entry[0]([_at_least(t, 2) for t in tensors], 0)
    tensors = [_at_least(t, 2) for t in _tensor_list(tensors, "vstack")]
    return cat(tensors, 0, out=out)


# -- flip / roll ------------------------------------------------------------------------------

class FlipBackward0(Node):
    __slots__ = ()
    saved_fields = {"dims": "dims"}

    def jvp(self, tangent):
        return tangent.flip(self.dims)

    def backward(self, grad):
        return (flip(grad, self.dims),)


def _dims_arg(dims):
    if len(dims) == 1 and isinstance(dims[0], (tuple, list)):
        return tuple(dims[0])
    return dims


@method()
def flip(input, *args, dims=None):
    """Reverses the order of the elements along the dimensions in ``dims``."""
    return _flip_entry[0](input, _dims_arg(args if dims is None else (dims,)))


def _python_flip(input, dims):
    """``flip`` in every case its compiled function (``_compiled_functions``) leaves to Python."""
    data = input._data
    dims = normalize_dims(dims, data.ndim) if dims else ()
    out = make(_flipped(data, dims))
    node = record(FlipBackward0, (input,), out)
    if node is not None:
        node.dims = dims
    return out


# (from its size, a flip of the last axis on the row loop, from C too: its loops of 4- and 8-byte elements)
_flip_entry = _compiled_functions.register(_python_flip, FlipBackward0, kind="flip",
                                           max_elements=openmp_kernels.REVERSED_ROWS_MIN_ELEMENTS - 1,
                                           addresses=openmp_kernels.reversed_rows_addresses)


# A flip of the last axis on the loop that copies rows backwards (NumPy's copy of that view
# goes element by element, at three times torch's time); NumPy's copy for the other axes.
def _flip_copied(data, dims):
    key = [slice(None)] * data.ndim   # (NumPy's ``flip`` builds this key in microseconds of Python)
    for d in dims:
        key[d] = _REVERSED
    return namespace_of(data).ascontiguousarray(data[tuple(key)])


_REVERSED = slice(None, None, -1)


_reversed_rows = KernelChoice("flip", onednn=openmp_kernels.reversed_rows_copy, numpy=_flip_copied)


def _flipped(data, dims):
    """A row-major copy of the array ``data`` reversed along ``dims`` (none: a plain copy)."""
    if not dims:
        return data.copy()
    if openmp_kernels.reversed_rows_applies(data, dims):
        return _reversed_rows(data, dims)
    return _flip_copied(data, dims)


@method()
def fliplr(input):
    """Flips a tensor of at least 2 dimensions left-right (dim 1)."""
    if input._data.ndim < 2:
        raise RuntimeError("Input must be >= 2-d.")
    return flip(input, (1,))


@method()
def flipud(input):
    """Flips a tensor of at least 1 dimension upside down (dim 0)."""
    if input._data.ndim < 1:
        raise RuntimeError("Input must be >= 1-d.")
    return flip(input, (0,))


def _rolled(data, shifts, axes):
    """``data`` rolled by ``shifts`` along ``axes`` (None: flattened, by ``shifts[0]``), a new
    array. Along one axis, the two pieces joined in their new order (NumPy's ``roll`` takes
    microseconds of Python to do that)."""
    if axes is None:
        return _rolled_along(data.reshape(-1), shifts[0], 0).reshape(data.shape)
    if len(axes) != 1:
        return namespace_of(data).roll(data, shifts, axis=axes)
    return _rolled_along(data, shifts[0], axes[0])


def _rolled_along(data, shift, axis):
    """``data`` rolled by ``shift`` along ``axis``, a new array."""
    n = data.shape[axis]
    shift = shift % n if n else 0
    if not shift:
        return data.copy()
    if not axis:
        return namespace_of(data).concatenate((data[n - shift:], data[:n - shift]))
    before = (slice(None),) * axis
    return namespace_of(data).concatenate((data[before + (slice(n - shift, None),)],
                                           data[before + (slice(None, n - shift),)]), axis=axis)


class RollBackward0(Node):
    __slots__ = ()
    saved_fields = {"shifts": "shifts", "dims": lambda node: node.dims or ()}

    def jvp(self, tangent):
        return tangent.roll(self.shifts, self.dims)

    def backward(self, grad):
        return (roll(grad, tuple(-s for s in self.shifts), self.dims),)


@method()
def roll(input, shifts, dims=None):
    """Rolls ``input`` by ``shifts`` along ``dims`` (elements pushed off one end come back at
    the other); without ``dims`` the tensor is flattened, rolled and restored."""
    data = input._data
    if shifts.__class__ is int and dims.__class__ is int and data.ndim and -data.ndim <= dims < data.ndim:
        axis = dims % data.ndim   # (one shift along one dim, the common case)
        out = make(_rolled_along(data, shifts, axis))
        node = record(RollBackward0, (input,), out)
        if node is not None:
            node.shifts, node.dims = (shifts,), (axis,)
        return out
    shifts = tuple(shifts) if isinstance(shifts, (tuple, list)) else (shifts,)
    if dims is None:
        if len(shifts) != 1:
            raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, dims:0")
        axis = None
    else:
        dims = tuple(dims) if isinstance(dims, (tuple, list)) else (dims,)
        if not shifts:
            raise RuntimeError("`shifts` required")
        if len(shifts) != len(dims):
            raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, dims:"
                               f"{len(dims)}")
        if not data.ndim:
            raise IndexError(f"Dimension specified as {dims[0]} but tensor has no dimensions")
        dims = (wrap_dim(dims[0], data.ndim),) if len(dims) == 1 else tuple(wrap_dim(d, data.ndim) for d in dims)
        axis = dims
    shifts = (int(shifts[0]),) if len(shifts) == 1 else tuple(int(s) for s in shifts)
    out = make(_rolled(data, shifts, axis))
    node = record(RollBackward0, (input,), out)
    if node is not None:
        node.shifts, node.dims = shifts, dims
    return out


# -- repeat / tile ----------------------------------------------------------------------------

class RepeatBackward0(Node):
    __slots__ = ()
    saved_fields = {"repeats": "repeats", "self_sym_sizes": "in_shape"}
    jvp = jvp_by_transposition

    def backward(self, grad):
        repeats, padded = self.repeats, self.padded
        interleaved = []
        for r, s in zip(repeats, padded):
            interleaved += [r, s]
        summed = grad.reshape(interleaved).sum(tuple(range(0, 2 * len(repeats), 2)))
        return (summed.reshape(self.in_shape),)


def _sizes_arg(sizes, op):
    if len(sizes) == 1 and isinstance(sizes[0], (tuple, list)):
        sizes = sizes[0]
    return tuple(int(s) for s in sizes)


@method()
def repeat(self, *sizes, repeats=None):
    """Repeats this tensor ``repeats[i]`` times along each dimension (leading sizes add new
    dimensions)."""
    repeats = _sizes_arg(sizes if repeats is None else (repeats,), "repeat")
    shape = self._data.shape
    if len(repeats) < len(shape):
        raise RuntimeError("Number of dimensions of repeat dims can not be smaller than number of "
                           "dimensions of tensor")
    padded = (1,) * (len(repeats) - len(shape)) + shape
    target = [r * s for r, s in zip(repeats, padded)]
    if any(r < 0 for r in repeats):
        raise RuntimeError(f"Trying to create tensor with negative dimension "
                           f"{min(target)}: {target}")
    xp = namespace_of(self._data)
    out = make(xp.tile(self._data.reshape(padded), repeats))
    node = record(RepeatBackward0, (self,), out)
    if node is not None:
        node.repeats, node.padded, node.in_shape = repeats, padded, shape
    return out


@method()
def tile(input, dims):
    """Repeats ``input`` ``dims[i]`` times along each dimension; ``dims`` shorter than the
    tensor's rank is padded with leading ones."""
    dims = _sizes_arg((dims,), "tile")
    nd = input._data.ndim
    if len(dims) < nd:
        dims = (1,) * (nd - len(dims)) + dims
    return repeat(input, dims)


# -- tril / triu ------------------------------------------------------------------------------

class TrilBackward0(Node):
    __slots__ = ()
    saved_fields = {"diagonal": "diagonal"}

    def jvp(self, tangent):
        return tangent.tril(self.diagonal)

    def backward(self, grad):
        return (tril(grad, self.diagonal),)


class TriuBackward0(Node):
    __slots__ = ()
    saved_fields = {"diagonal": "diagonal"}

    def jvp(self, tangent):
        return tangent.triu(self.diagonal)

    def backward(self, grad):
        return (triu(grad, self.diagonal),)


# Triangles of matrices of up to this many elements are cut by a mask of the kept elements'
# bits (one pass: NumPy's tril and triu select with ``where``, several times slower, and take
# microseconds of Python for small matrices); the masks of the last few shapes are kept
TRIANGLE_MASK_MAX_ELEMENTS = 1 << 20


@functools.lru_cache(maxsize=8)
def _triangle_bits(op, rows, cols, diagonal, integer):
    """All ones (as ``integer``) where ``op`` ('tril', 'triu') keeps an element of a rows x cols
    matrix, zeros elsewhere (read-only)."""
    kept = np.tri(rows, cols, diagonal, dtype=bool) if op == "tril" else ~np.tri(rows, cols, diagonal - 1, dtype=bool)
    bits = -kept.astype(integer)
    bits.flags.writeable = False
    return bits


# From this many elements a row-major array's triangle is cut on openmp_kernels' row loop (each row's kept
# elements copied, the others zeroed: one pass without the mask, none over the kept elements in place)
TRIANGLE_LOOP_MIN_ELEMENTS = 1 << 14


def _triangle_data(op, data, diagonal, out=None):
    """``op`` ('tril', 'triu') of the array ``data`` along its last two dims (into ``out``,
    which may be ``data``, when given)."""
    if data.size >= TRIANGLE_LOOP_MIN_ELEMENTS:
        return _triangle_kernel(op, data, diagonal, out)
    return _triangle_in_numpy(op, data, diagonal, out)


def _triangle_in_numpy(op, data, diagonal, out):
    rows, cols = data.shape[-2:]
    integer = _SAME_SIZE_INTEGER.get(data.dtype.itemsize)
    if (type(data) is not np.ndarray or integer is None
            or not 0 < rows * cols <= TRIANGLE_MASK_MAX_ELEMENTS):
        xp = namespace_of(data)
        if out is None:
            return getattr(xp, op)(data, diagonal)
        dropped = (~xp.tri(rows, cols, diagonal, dtype=bool) if op == "tril"
                   else xp.tri(rows, cols, diagonal - 1, dtype=bool))
        xp.copyto(out, xp.zeros((), dtype=data.dtype), where=dropped)
        return out
    bits = _triangle_bits(op, rows, cols, diagonal, integer)
    result = np.bitwise_and(data.view(integer), bits, out=None if out is None else out.view(integer))
    return result.view(data.dtype)


_triangle_kernel = KernelChoice("triangle", onednn=lambda op, data, diagonal, out: openmp_kernels.triangle(
    op == "triu", data, diagonal, out), numpy=_triangle_in_numpy)


def _triangle(op, node_cls, input, diagonal):
    data = input._data
    if data.ndim < 2:
        raise RuntimeError(f"{op}: input tensor must have at least 2 dimensions")
    out = make(_triangle_data(op, data, int(diagonal)))
    node = record(node_cls, (input,), out)
    if node is not None:
        node.diagonal = int(diagonal)
    return out


def _python_tril(input, diagonal):
    return _triangle("tril", TrilBackward0, input, diagonal)


def _python_triu(input, diagonal):
    return _triangle("triu", TriuBackward0, input, diagonal)


_tril_entry, _triu_entry = (_compiled_functions.register(python_op, node_cls, kind="triangle", specifics=upper)
                            for python_op, node_cls, upper in ((_python_tril, TrilBackward0, False),
                                                               (_python_triu, TriuBackward0, True)))


@method()
def tril(input, diagonal=0, *, out=None):
    """The lower triangle of the (batched) matrix ``input``: elements above the ``diagonal``-th
    diagonal are zeroed."""
    if out is None:
        return _tril_entry[0](input, diagonal)
    return _into(out, _triangle("tril", TrilBackward0, input, diagonal), True, "tril")


@method()
def triu(input, diagonal=0, *, out=None):
    """The upper triangle of the (batched) matrix ``input``: elements below the ``diagonal``-th
    diagonal are zeroed."""
    if out is None:
        return _triu_entry[0](input, diagonal)
    return _into(out, _triangle("triu", TriuBackward0, input, diagonal), True, "triu")


def _triangle_(op, self, diagonal):
    """Zero, in ``self``'s own array, the elements that ``op`` ('tril', 'triu') drops."""
    data = self._data
    if data.ndim < 2:
        raise RuntimeError(f"{op}: input tensor must have at least 2 dimensions")
    check_inplace(self)
    _triangle_data(op, data, int(diagonal), out=data)
    bump_version(self)
    return self


@method()
def tril_(self, diagonal=0):
    """In-place ``tril``."""
    if inplace_untracked(self):
        return _triangle_("tril", self, diagonal)
    return apply_inplace(self, tril, diagonal)


@method()
def triu_(self, diagonal=0):
    """In-place ``triu``."""
    if inplace_untracked(self):
        return _triangle_("triu", self, diagonal)
    return apply_inplace(self, triu, diagonal)


# -- splitting: tensor_split, hsplit, vsplit, dsplit ----------------------------------------------

def _split_points(input, indices_or_sections, dim):
    """Where ``tensor_split`` cuts dimension ``dim``: from a number of sections (the first
    ones one longer when the size does not divide) or from a list of indices."""
    n = input._data.shape[dim]
    if isinstance(indices_or_sections, Tensor):
        t = indices_or_sections
        if t._data.dtype != np.int64:
            raise RuntimeError("tensor_split expected tensor_indices_or_sections to have dtype of "
                               f"long, but got {_type_word(t._data.dtype)}")
        if t._data.ndim > 1:
            raise RuntimeError("tensor_split expected tensor_indices_or_sections to be a "
                               "zero-dimensional or one-dimensional tensor, but got a tensor with "
                               f"{t._data.ndim} dims")
        indices_or_sections = t.item() if t._data.ndim == 0 else [int(i) for i in t._data.tolist()]
    if isinstance(indices_or_sections, (list, tuple)):
        return [int(i) for i in indices_or_sections]
    if isinstance(indices_or_sections, bool) or not isinstance(indices_or_sections, int):
        raise TypeError("tensor_split() received an invalid combination of arguments - got "
                        f"(Tensor, {type(indices_or_sections).__name__})")
    sections = indices_or_sections
    if sections <= 0:
        raise RuntimeError(f"number of sections must be larger than 0, got {sections}")
    size, extra = divmod(n, sections)
    points, at = [], 0
    for i in range(sections - 1):
        at += size + (1 if i < extra else 0)
        points.append(at)
    return points


def _sections_or_indices(op, sections, indices, tensor_indices_or_sections=None):
    """The one of torch's alternative arguments given (``sections`` also takes indices
    positionally, as torch's overloads do)."""
    given = [a for a in (sections, indices, tensor_indices_or_sections) if a is not None]
    if len(given) != 1:
        raise TypeError(f"{op}() takes exactly one of sections, indices or "
                        f"tensor_indices_or_sections; got {len(given)}")
    return given[0]


def tensor_split(input, sections=None, dim=0, *, indices=None, tensor_indices_or_sections=None):
    """Splits ``input`` into views along ``dim``: into ``sections`` parts of nearly equal
    size (an int), or at the given ``indices`` (a list, tuple or tensor)."""
    if sections is not None and indices is None and tensor_indices_or_sections is None:
        return _tensor_split_entry[0](input, sections, dim)
    return _python_tensor_split(input, _sections_or_indices("tensor_split", sections, indices,
                                                            tensor_indices_or_sections), dim)


def _python_tensor_split(input, indices_or_sections, dim):
    """``tensor_split`` in every case its compiled function (``_compiled_splits``) leaves to Python."""
    data = input._data
    if not data.ndim:
        raise RuntimeError("tensor_split expected at least a 1-dimensional tensor, but got a tensor "
                           "with 0 dims")
    dim = wrap_dim(dim, data.ndim)
    points = _split_points(input, indices_or_sections, dim)
    n = data.shape[dim]
    bounds = [0] + [min(max(p if p >= 0 else p + n, 0), n) for p in points] + [n]
    along = (slice(None),) * dim   # (each part is the narrow from lo, as indexing makes it)
    return tuple(input[along + (slice(lo, max(hi, lo)),)] for lo, hi in zip(bounds[:-1], bounds[1:]))


_tensor_split_entry = _compiled_functions.register(_python_tensor_split, None, kind="split", specifics="tensor_split")


def _directional_split(op, input, sections, dim, min_dims):
    nd = input._data.ndim
    if nd < min_dims:
        raise RuntimeError(f"torch.{op} requires a tensor with at least {min_dims} dimension, but got "
                           f"a tensor with {nd} dimensions!")
    if isinstance(sections, int) and not isinstance(sections, bool):
        size = input._data.shape[dim]
        if sections == 0 or size % sections:
            raise RuntimeError(f"torch.{op} attempted to split along dimension {dim}, but the size of "
                               f"the dimension {size} is not divisible by the split_size {sections}!")
    return _tensor_split_entry[0](input, sections, dim)   # (equal parts where sections is an int)


def hsplit(input, sections=None, *, indices=None):
    """Splits ``input`` horizontally: along dim 1 (dim 0 for a 1-d tensor), into ``sections``
    equal parts or at ``indices``."""
    dim = 0 if input._data.ndim == 1 else 1
    return _directional_split("hsplit", input, _sections_or_indices("hsplit", sections, indices), dim, 1)


def vsplit(input, sections=None, *, indices=None):
    """Splits ``input`` (at least 2-d) vertically, along dim 0, into ``sections`` equal parts or
    at ``indices``."""
    return _directional_split("vsplit", input, _sections_or_indices("vsplit", sections, indices), 0, 2)


def dsplit(input, sections=None, *, indices=None):
    """Splits ``input`` (at least 3-d) depthwise, along dim 2, into ``sections`` equal parts or
    at ``indices``."""
    return _directional_split("dsplit", input, _sections_or_indices("dsplit", sections, indices), 2, 3)


for _name in ("tensor_split", "hsplit", "vsplit", "dsplit"):
    method(_name)(globals()[_name])


# -- stacking: dstack, column_stack, row_stack; atleast_nd ---------------------------------------

def _atleast(tensors, ndim, shape_of):
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        return tuple(_atleast_one(t, ndim, shape_of) for t in tensors[0])
    if len(tensors) == 1:
        return _atleast_one(tensors[0], ndim, shape_of)
    return tuple(_atleast_one(t, ndim, shape_of) for t in tensors)


def _atleast_one(t, ndim, shape_of):
    shape = t._data.shape
    if len(shape) >= ndim:
        return t
    return t.reshape(shape_of(shape))


def _shape_3d(shape):
    if len(shape) == 0:
        return (1, 1, 1)
    if len(shape) == 1:
        return (1, shape[0], 1)
    return shape + (1,)


def atleast_1d(*tensors):
    """Returns each tensor with at least one dimension (0-d tensors become shape (1,))."""
    return _atleast(tensors, 1, lambda s: (1,))


def atleast_2d(*tensors):
    """Returns each tensor with at least two dimensions (leading ones added)."""
    return _atleast(tensors, 2, lambda s: (1,) * (2 - len(s)) + s)


def atleast_3d(*tensors):
    """Returns each tensor with at least three dimensions: (1, 1, 1), (1, n, 1) or (m, n, 1)."""
    return _atleast(tensors, 3, _shape_3d)


def dstack(tensors, *, out=None):
    """Stacks ``tensors`` depthwise (along dim 2, after making them at least 3-d)."""
    if out is None and _plain_tensors(tensors):
        return _cat_entry[0]([_atleast_one(t, 3, _shape_3d) for t in tensors], 2)
    tensors = [_atleast_one(t, 3, _shape_3d) for t in _tensor_list(tensors, "dstack")]
    return cat(tensors, 2, out=out)


def column_stack(tensors, *, out=None):
    """Stacks ``tensors`` as columns: 0-d and 1-d tensors become columns, then all are
    concatenated along dim 1."""
    tensors = _tensor_list(tensors, "column_stack")
    if not tensors:
        raise RuntimeError("column_stack expects a non-empty TensorList")
    columns = [t.reshape(t._data.size, 1) if t._data.ndim <= 1 else t for t in tensors]
    return cat(columns, 1, out=out)


row_stack = vstack


# -- rot90 ------------------------------------------------------------------------------------------

class Rot90Backward0(Node):
    __slots__ = ()
    saved_fields = {"k": "k", "dims": "dims"}
    jvp = jvp_by_transposition

    def backward(self, grad):
        return (rot90(grad, -self.k, self.dims),)


@method()
def rot90(input, k=1, dims=(0, 1)):
    """Rotates ``input`` by 90 degrees ``k`` times in the plane of ``dims``, from the first
    towards the second."""
    dims = list(dims)
    data = input._data
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    if data.ndim < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {data.ndim}")
    d0, d1 = wrap_dim(dims[0], data.ndim), wrap_dim(dims[1], data.ndim)
    if d0 == d1:
        raise RuntimeError(f"expected rotation dims to be different, but got dim0 = {d0} and dim1 = {d1}")
    k = int(k)
    turns = k % 4
    if turns == 1:     # torch's result: the flip along dims[1], transposed (not copied again)
        rotated = _flipped(data, (d1,)).swapaxes(d0, d1)
    elif turns == 2:
        rotated = _flipped(data, (d0, d1))
    elif turns == 3:
        rotated = _flipped(data, (d0,)).swapaxes(d0, d1)
    else:
        rotated = namespace_of(data).ascontiguousarray(data).copy()
    out = make(rotated)
    node = record(Rot90Backward0, (input,), out)
    if node is not None:
        node.k, node.dims = k, (d0, d1)
    return out


# -- repeat_interleave ------------------------------------------------------------------------------

def _check_repeats_dtype(counts):
    if counts.dtype not in (np.int64, np.int32):
        raise NotImplementedError(f"\"repeat_interleave_cpu\" not implemented for '{_type_word(counts.dtype)}'")


@method()
def repeat_interleave(input, repeats=None, dim=None, *, output_size=None):
    """Repeats each element of ``input`` (each slice along ``dim``; of the flattened input when
    ``dim`` is None) ``repeats`` times (an int, or a tensor with one count per element).
    ``repeat_interleave(repeats)`` alone repeats each index i ``repeats[i]`` times."""
    if repeats is None:
        counts = input._data
        if counts.ndim != 1:
            raise RuntimeError("repeat_interleave only accept 1D vector as repeat")
        _check_repeats_dtype(counts)
        if counts.size and int(counts.min()) < 0:
            raise RuntimeError("repeats can not be negative")
        xp = namespace_of(counts)
        return make(xp.repeat(xp.arange(counts.size, dtype=counts.dtype), counts.reshape(-1)))
    if isinstance(repeats, Tensor):
        if repeats._data.ndim > 1:
            raise RuntimeError("repeats must be 0-dim or 1-dim tensor")
        _check_repeats_dtype(repeats._data)
    if dim is None:
        input, dim = input.reshape(-1), 0
    elif not input._data.ndim:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    dim = wrap_dim(dim, input._data.ndim)
    n = input._data.shape[dim] if input._data.ndim else 1
    xp = namespace_of(input._data)
    if not isinstance(repeats, Tensor) and input._data.ndim:
        return _repeat_each(input, int(repeats), dim, output_size)
    if isinstance(repeats, Tensor):
        counts = repeats._data.reshape(-1)
        if counts.size == 1:
            counts = xp.broadcast_to(counts, (n,))
        if counts.size != n:
            raise RuntimeError(f"repeats must have the same size as input along dim, but got "
                               f"repeats.size(0) = {counts.size} and input.size({dim}) = {n}")
    else:
        counts = xp.full((n,), int(repeats))
    if counts.size and int(counts.min()) < 0:
        raise RuntimeError("repeats can not be negative")
    if output_size is not None and int(counts.sum()) != output_size:
        if isinstance(repeats, Tensor):
            raise RuntimeError("allocated size does not match required size")
        raise RuntimeError(f"repeat_interleave: Invalid output_size, expected {int(counts.sum())} but "
                           f"got {output_size}")
    index = xp.repeat(xp.arange(n), counts)
    if not input._data.ndim:
        input = input.reshape(1)
    return input[(slice(None),) * dim + (make(index),)]


class RepeatInterleaveBackward0(Node):
    """``repeat_interleave`` by a number: each element's gradient is the sum of its copies'
    (torch records the same op as expand, clone and view)."""
    __slots__ = ()
    saved_fields = {"repeats": "repeats", "dim": "dim"}
    jvp = jvp_by_transposition

    def backward(self, grad):
        n, dim = self.in_shape[self.dim], self.dim
        return (grad.unflatten(dim, (n, self.repeats)).sum(dim + 1),)

    def backward_arrays(self, grad):
        from .reduce import array_sum   # (reduce imports this module)
        data = grad._data
        shape, dim = self.in_shape, self.dim
        copies = data.reshape(shape[:dim + 1] + (self.repeats,) + shape[dim + 1:])
        return (make(array_sum(copies, axis=dim + 1)),)


def _repeat_each(input, repeats, dim, output_size):
    """``repeat_interleave`` by a number: each slice along ``dim`` repeated ``repeats`` times
    in a row."""
    if repeats < 0:
        raise RuntimeError("repeats can not be negative")
    data = input._data
    n = data.shape[dim]
    if output_size is not None and n * repeats != output_size:
        raise RuntimeError(f"repeat_interleave: Invalid output_size, expected {n * repeats} but "
                           f"got {output_size}")
    out = make(namespace_of(data).repeat(data, repeats, axis=dim))
    node = record(RepeatInterleaveBackward0, (input,), out)
    if node is not None:
        node.repeats, node.dim, node.in_shape = repeats, dim, data.shape
    return out


# -- broadcasting, meshgrid, cartesian_prod, combinations --------------------------------------------

def broadcast_shapes(*shapes):
    """The shape that tensors of ``shapes`` broadcast to together."""
    result = []
    for i, shape in enumerate(shapes):
        shape = (shape,) if isinstance(shape, int) else tuple(shape)
        for k, s in enumerate(reversed(shape)):
            if k == len(result):
                result.insert(0, s)
            elif result[-1 - k] == 1:
                result[-1 - k] = s
            elif s != 1 and s != result[-1 - k]:
                raise RuntimeError(f"Attempting to broadcast a dimension of length {s} at {-1 - k}! "
                                   f"Mismatching argument at index {i} had {shape}; but expected shape "
                                   f"should be broadcastable to {result}")
    return Size(result)


@method()
def broadcast_to(input, size):
    """``input`` broadcast (as a view) to ``size``: as ``input.expand(size)``."""
    return input.expand(size)


def broadcast_tensors(*tensors):
    """Broadcasts ``tensors`` against each other: views, all of one shape."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    shape = tensors[0]._data.shape if tensors else ()
    for t in tensors[1:]:
        shape = _broadcast_pair(shape, t._data.shape)
    return tuple(t if t._data.shape == shape else t.expand(shape) for t in tensors)


def _broadcast_pair(a, b):
    n = max(len(a), len(b))
    a, b = (1,) * (n - len(a)) + a, (1,) * (n - len(b)) + b
    out = []
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y and x != 1 and y != 1:
            raise RuntimeError(f"The size of tensor a ({x}) must match the size of tensor b ({y}) at "
                               f"non-singleton dimension {i}")
        out.append(y if x == 1 else x)
    return tuple(out)


def meshgrid(*tensors, indexing=None):
    """Coordinate grids from 0-d or 1-d ``tensors``: output i varies along dim i
    (``indexing='ij'``, the default) or with the first two dims swapped (``'xy'``)."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    if indexing is None:
        import warnings
        warnings.warn("torch.meshgrid: in an upcoming release, it will be required to pass the "
                      "indexing argument.", UserWarning, stacklevel=2)
        indexing = "ij"
    if indexing not in ("ij", "xy"):
        raise RuntimeError(f'torch.meshgrid: indexing must be one of "xy" or "ij", but received: {indexing}')
    for t in tensors:
        if t._data.dtype != tensors[0]._data.dtype:
            raise RuntimeError("meshgrid expects all tensors to have the same dtype")
    for t in tensors:
        if t._data.ndim > 1:
            raise RuntimeError(f"torch.meshgrid: Expected 0D or 1D tensor in the tensor list but got: {t}")
    swap = indexing == "xy" and len(tensors) >= 2
    order = list(tensors)
    if swap:
        order[0], order[1] = order[1], order[0]
    shape = tuple(t._data.size for t in order)
    grids = []
    for i, t in enumerate(order):
        view_shape = [1] * len(order)
        view_shape[i] = -1
        grids.append(t.reshape(view_shape).expand(shape))
    if swap:
        grids[0], grids[1] = grids[1], grids[0]
    return tuple(grids)


def cartesian_prod(*tensors):
    """The Cartesian product of the 1-d ``tensors``, one combination per row."""
    for t in tensors:
        if t._data.ndim != 1:
            raise RuntimeError(f"Expect a 1D vector, but got shape {list(t._data.shape)}")
    if len(tensors) == 1:
        return tensors[0]
    grids = meshgrid(*tensors, indexing="ij")
    return stack([g.reshape(-1) for g in grids], 1)


# From this many elements ``combinations`` of pairs takes NumPy's upper-triangle indices; below,
# the itertools pairs read into an array cost fewer calls (BENCHMARKS.md, "combinations")
PAIRS_BY_TRIANGLE_MIN = 24


def combinations(input, r=2, with_replacement=False):
    """The length-``r`` combinations of the elements of the 1-d ``input`` (in order, as
    ``itertools.combinations``; with repeats when ``with_replacement``)."""
    data = input._data
    if data.ndim != 1:
        raise RuntimeError(f"Expect a 1D vector, but got shape {list(data.shape)}")
    if r < 0:
        raise RuntimeError(f"Expect a non-negative number, but got {r}")
    if r == 0:
        return make(namespace_of(data).zeros((0,), dtype=data.dtype))
    xp = namespace_of(data)
    n = data.shape[0]
    if n ** r > 2 ** 63 - 1:   # torch builds an n^r grid first
        raise RuntimeError("numel: integer multiplication overflow")
    if n ** r * 8 > 2 ** 40:   # a terabyte of grid: torch's allocation fails
        raise RuntimeError(f"DefaultCPUAllocator: can't allocate memory: you tried to allocate "
                           f"{n ** r * 8} bytes.")
    # the index tuples in torch's order (its grid's, row by row), without building the grid
    if r == 2 and n >= PAIRS_BY_TRIANGLE_MIN:   # the upper triangle's indices, row by row: the same order
        index = np.stack(np.triu_indices(n, 0 if with_replacement else 1), 1)
    else:
        pick = itertools.combinations_with_replacement if with_replacement else itertools.combinations
        index = np.fromiter(itertools.chain.from_iterable(pick(range(n), r)), np.int64).reshape(-1, r)
    return stack([input[make(xp.asarray(index[:, i]))] for i in range(r)], 1)


# -- diagonals: diag, diag_embed, trace -------------------------------------------------------------

class DiagEmbedBackward0(Node):
    __slots__ = ()
    saved_fields = {"offset": "offset", "dim1": "dim1", "dim2": "dim2"}
    jvp = jvp_by_transposition

    def backward(self, grad):
        return (grad.diagonal(self.offset, self.dim1, self.dim2),)


@method()
def diag_embed(input, offset=0, dim1=-2, dim2=-1):
    """A tensor whose diagonals (``offset`` from the main one, in the planes of ``dim1`` and
    ``dim2``) are filled by the last dimension of ``input``; zeros elsewhere."""
    return _diag_embed_entry[0](input, offset, dim1, dim2)


def _python_diag_embed(input, offset, dim1, dim2):
    """``diag_embed`` in every case its compiled function (``_compiled_diagonals``) leaves to Python."""
    check_tensor(input, "diag_embed")
    data = input._data
    nd = data.ndim + 1
    d1, d2 = _diagonal_dims(nd, dim1, dim2)
    n = (data.shape[-1] if data.ndim else 1) + abs(offset)
    rest = iter(data.shape[:-1])
    shape = tuple(n if d in (d1, d2) else next(rest) for d in range(nd))
    xp = namespace_of(data)
    out_data = xp.zeros(shape, dtype=data.dtype)
    _diagonal_data(out_data, offset, d1, d2)[...] = data
    out = make(out_data)
    node = record(DiagEmbedBackward0, (input,), out)
    if node is not None:
        node.offset, node.dim1, node.dim2 = offset, d1, d2
    return out


def diag(input, diagonal=0, *, out=None):
    """For a 1-d ``input``, the square matrix with ``input`` on its ``diagonal``-th diagonal;
    for a 2-d ``input``, a copy of its ``diagonal``-th diagonal."""
    if out is None:
        return _diag_entry[0](input, diagonal)
    with no_grad():   # torch's diag writes into out through ops: an input requiring grad is taken
        result = _diag(input, diagonal)
    return write_out(result, out, True, "diag")


@method("diag")
def _diag_method(input, diagonal=0):
    return _diag_entry[0](input, diagonal)


def _diag(input, diagonal=0):
    """``diag`` in every case its compiled function (``_compiled_diagonals``) leaves to Python."""
    check_tensor(input, "diag")
    nd = input._data.ndim
    if nd == 1:
        return _python_diag_embed(input, diagonal, 0, 1)
    if nd == 2:
        return input.diagonal(diagonal).clone()
    raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {nd}D")


_diag_embed_entry = _compiled_functions.register(_python_diag_embed, DiagEmbedBackward0, kind="diag_embed")
_diag_entry = _compiled_functions.register(_diag, DiagEmbedBackward0, kind="diag")


class TraceBackward0(Node):
    __slots__ = ()
    saved_fields = {"self_sym_sizes": "in_shape"}

    def jvp(self, tangent):
        return tangent.trace()

    def backward(self, grad):
        from .view import diagonal_scatter_zeros
        n = min(self.in_shape)
        return (diagonal_scatter_zeros(grad.expand(n), self.in_shape, 0, 0, 1),)


@method()
@autocast_policy("fp32")
def trace(input):
    """The sum of the elements on the main diagonal of the 2-d ``input``."""
    return _trace_entry[0](input)


def _python_trace(input):
    """``trace`` in every case its compiled function (``_compiled_functions``) leaves to Python."""
    data = input._data
    if data.ndim != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {data.ndim}")
    if data.dtype.kind == "b":
        raise NotImplementedError("\"trace\" not implemented for 'Bool'")
    xp = namespace_of(data)
    total = data.trace(dtype=xp.int64 if data.dtype.kind in "iu" else data.dtype)   # (the array's own method:
    out = make(xp.asarray(total))                                                  # no dispatch by function)
    node = record(TraceBackward0, (input,), out)
    if node is not None:
        node.in_shape = data.shape
    return out


_trace_entry = _compiled_functions.register(_python_trace, TraceBackward0, kind="trace")


def _indices_of(fn, row, col, offset, dtype, device):
    from .creation import tensor
    import numpy as np
    rows, cols = fn(row, offset, col) if row and col else (np.zeros(0, int), np.zeros(0, int))
    return tensor(np.stack([rows, cols]), dtype=dtype, device=device)


def tril_indices(row, col, offset=0, *, dtype=None, device=None, layout=None):
    """The (2, N) row and column indices of the lower triangle of a ``row`` x ``col`` matrix
    (on and below the ``offset``-th diagonal), in row-major order."""
    import numpy as np
    from .. import _dtype
    return _indices_of(np.tril_indices, row, col, offset, dtype or _dtype.int64, device)


def triu_indices(row, col, offset=0, *, dtype=None, device=None, layout=None):
    """The (2, N) row and column indices of the upper triangle of a ``row`` x ``col`` matrix
    (on and above the ``offset``-th diagonal), in row-major order."""
    import numpy as np
    from .. import _dtype
    return _indices_of(np.triu_indices, row, col, offset, dtype or _dtype.int64, device)


# -- scatters into a copy: diagonal_scatter, select_scatter, slice_scatter ----------------------------

class _EmbedScatterBackward(Node):
    """The gradient of writing ``src`` into a region of a copy of ``input``: ``input`` gets it
    outside the region, ``src`` inside."""
    __slots__ = ()
    jvp = jvp_by_transposition

    def backward(self, grad):
        g_input = g_src = None
        if self.next_functions[0][0] is not None:
            xp = namespace_of(grad._data)
            g_input = _scatter_region(type(self), grad, make(xp.zeros(self.src_shape, grad._data.dtype)),
                                      self.region)
        if self.next_functions[1][0] is not None:
            g_src = self.region.take(grad)
        return g_input, g_src


DiagonalScatterBackward0 = type("DiagonalScatterBackward0", (_EmbedScatterBackward,), {"__slots__": ()})
SelectScatterBackward0 = type("SelectScatterBackward0", (_EmbedScatterBackward,), {"__slots__": ()})
SliceScatterBackward0 = type("SliceScatterBackward0", (_EmbedScatterBackward,), {"__slots__": ()})


class _DiagonalRegion:
    """A diagonal, as ``diagonal(offset, dim1, dim2)`` views it."""

    def __init__(self, offset, dim1, dim2):
        self.offset, self.dim1, self.dim2 = offset, dim1, dim2

    def of(self, data):
        return _diagonal_data(data, self.offset, self.dim1, self.dim2)

    def take(self, t):
        return t.diagonal(self.offset, self.dim1, self.dim2)


def _scatter_region(node_cls, input, src, region):
    out_data = input._data.copy()
    target = region.of(out_data)   # (the copy's region: the shape checked, then written)
    if tuple(src._data.shape) != tuple(target.shape):
        raise RuntimeError("expected src to have a size equal to the slice of self. src size = "
                           f"{list(src._data.shape)}, slice size = {list(target.shape)}")
    target[...] = src._data
    out = make(out_data)
    node = record(node_cls, (input, src), out)
    if node is not None:
        node.region, node.src_shape = region, src._data.shape
    return out


def diagonal_scatter(input, src, offset=0, dim1=0, dim2=1):
    """A copy of ``input`` with ``src`` written on its diagonal (as ``diagonal`` selects it)."""
    d1, d2 = _diagonal_dims(input._data.ndim, dim1, dim2)
    return _scatter_region(DiagonalScatterBackward0, input, src, _DiagonalRegion(offset, d1, d2))


def select_scatter(input, src, dim, index):
    """A copy of ``input`` with ``src`` written at ``index`` along ``dim``."""
    shape = input._data.shape
    dim = wrap_dim(dim, len(shape))
    index = int(index)
    if not -shape[dim] <= index < shape[dim]:
        raise IndexError(f"select(): index {index} out of range for tensor of size {list(shape)} at "
                         f"dimension {dim}")
    key = (slice(None),) * dim + (index,)
    return _scatter_region(SelectScatterBackward0, input, src, KeyRegion(key))


def slice_scatter(input, src, dim=0, start=None, end=None, step=1, *, out=None):
    """A copy of ``input`` with ``src`` written into the slice ``start:end:step`` of ``dim``."""
    if out is None:
        return _slice_scatter(input, src, dim, start, end, step)
    with no_grad():   # torch's slice_scatter writes into out through ops: inputs requiring grad are taken
        result = _slice_scatter(input, src, dim, start, end, step)
    return write_out(result, out, True, "slice_scatter")


def _slice_scatter(input, src, dim=0, start=None, end=None, step=1):
    dim = wrap_dim(dim, input._data.ndim)
    key = (slice(None),) * dim + (slice(start, end, step),)
    return _scatter_region(SliceScatterBackward0, input, src, KeyRegion(key))


for _name in ("diagonal_scatter", "select_scatter"):
    method(_name)(globals()[_name])
method("slice_scatter")(_slice_scatter)   # the function takes torch's out=, the method none


# -- block_diag, kron, cross --------------------------------------------------------------------------

class BlockDiagBackward0(Node):
    __slots__ = ()
    jvp = jvp_by_transposition

    def backward(self, grad):
        grads, r, c = [], 0, 0
        for shape, (h, w), dtype in zip(self.shapes, self.blocks, self.dtypes):
            block = grad[r:r + h, c:c + w]
            grads.append(_grad_for(block.reshape(shape), dtype))
            r, c = r + h, c + w
        return tuple(grads)


def _block_shape(t, i):
    shape = t._data.shape
    if len(shape) > 2:
        raise RuntimeError(f"torch.block_diag: Input tensors must have 2 or fewer dimensions. Input {i} "
                           f"has {len(shape)} dimensions")
    if len(shape) == 2:
        return shape
    return (1, shape[0]) if shape else (1, 1)


def block_diag(*tensors):
    """The block diagonal matrix of ``tensors`` (0-d, 1-d or 2-d; 1-d ones are rows)."""
    if not tensors:
        return zeros(1, 0)
    blocks = [_block_shape(t, i) for i, t in enumerate(tensors)]
    np_dtype = _common_dtype(list(tensors)).np
    xp = namespace_of(tensors[0]._data)
    out_data = xp.zeros((sum(b[0] for b in blocks), sum(b[1] for b in blocks)), dtype=np_dtype)
    r = c = 0
    for t, (h, w) in zip(tensors, blocks):
        out_data[r:r + h, c:c + w] = t._data.reshape(h, w)
        r, c = r + h, c + w
    out = make(out_data)
    node = _record_list(BlockDiagBackward0, tensors, out)
    if node is not None:
        node.shapes, node.blocks = [t._data.shape for t in tensors], blocks
    return out


# kron's products merge the last dims first from results of this many elements: below, the
# two extra recorded ops (repeat_interleave, repeat) cost more than the inner loops they save
# (BENCHMARKS.md, "kron's size rule")
KRON_ROWS_MIN_ELEMENTS = 1 << 13


def kron(input, other, *, out=None):
    """The Kronecker product of ``input`` and ``other`` (the smaller rank padded with leading
    ones): every element of ``input`` times the whole of ``other``."""
    result = _kron_entry[0](input, other)
    return result if out is None else write_out(result, out, False, "kron")


@method("kron")
def _kron_method(input, other):
    return _kron_entry[0](input, other)


def _kron_matrices(a, b):
    """The Kronecker product of two NumPy matrices, as the composite's broadcast product."""
    (m, n), (p, q) = a.shape, b.shape
    return np.multiply(a.reshape((m, 1, n, 1)), b.reshape((1, p, 1, q))).reshape((m * p, n * q))


# the Kronecker product of two float matrices where nothing records: openmp_kernels' loop over the result's
# rows (each a row of the second times an element of the first), else the broadcast product
_KRON_LOOP_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))
_kron_of_matrices = KernelChoice("kron", onednn=openmp_kernels.kron, numpy=_kron_matrices)


def _kron(input, other):
    """``kron`` in every case its compiled function (``_compiled_products``) leaves to Python."""
    ad, bd = input._data, other._data
    untracked = (ad.__class__ is np.ndarray and bd.__class__ is np.ndarray and ad.dtype == bd.dtype
                 and not forward_mode.active
                 and not (grad_state.grad_enabled and (input._requires_grad or other._requires_grad)))
    # nothing recorded: float matrices on the loop at every size, else the composite's broadcast product on the
    # arrays, without its tensors
    if untracked and ad.ndim == 2 and bd.ndim == 2 and ad.dtype in _KRON_LOOP_DTYPES:
        return make(_kron_of_matrices(ad, bd))
    if untracked and ad.size * bd.size < KRON_ROWS_MIN_ELEMENTS:
        if ad.ndim == 2 and bd.ndim == 2:   # (matrices: their shapes spelled out)
            return make(_kron_matrices(ad, bd))
        nd = max(ad.ndim, bd.ndim)
        a_shape, b_shape = (1,) * (nd - ad.ndim) + ad.shape, (1,) * (nd - bd.ndim) + bd.shape
        product = np.multiply(ad.reshape(tuple(s for d in a_shape for s in (d, 1))),
                              bd.reshape(tuple(s for d in b_shape for s in (1, d))))
        return make(product.reshape(tuple(x * y for x, y in zip(a_shape, b_shape))))
    nd = max(input._data.ndim, other._data.ndim)
    a = input.reshape((1,) * (nd - input._data.ndim) + input._data.shape)
    b = other.reshape((1,) * (nd - other._data.ndim) + other._data.shape)
    a_shape, b_shape = a._data.shape, b._data.shape
    out_shape = tuple(x * y for x, y in zip(a_shape, b_shape))
    if (nd and all(a_shape) and all(b_shape) and "c" not in (a._data.dtype.kind, b._data.dtype.kind)
            and math.prod(out_shape) >= KRON_ROWS_MIN_ELEMENTS):
        # the last dims merged first (input's repeated, other's tiled), so that the broadcast
        # product's inner loop runs along a row of the result rather than along other's last
        # dim: the same products, in far fewer NumPy inner loops (real numbers: repeat_interleave
        # has no complex gradient)
        last = a_shape[-1] * b_shape[-1]
        a_rows = a.repeat_interleave(b_shape[-1], dim=-1)
        b_rows = b.repeat((1,) * (nd - 1) + (a_shape[-1],))
        a_wide = a_rows.reshape(tuple(s for d in a_shape[:-1] for s in (d, 1)) + (last,))
        b_wide = b_rows.reshape(tuple(s for d in b_shape[:-1] for s in (1, d)) + (last,))
        return (a_wide * b_wide).reshape(out_shape)
    a_wide = a.reshape(tuple(s for d in a_shape for s in (d, 1)))
    b_wide = b.reshape(tuple(s for d in b_shape for s in (1, d)))
    return (a_wide * b_wide).reshape(out_shape)


_kron_entry = _compiled_functions.register(_kron, None, kind="kron", max_elements=KRON_ROWS_MIN_ELEMENTS)


def _first_dim_of_size_3(input, other):
    warn_once("Using torch.cross without specifying the dim arg is deprecated.\nPlease either "
              "pass the dim explicitly or simply use torch.linalg.cross.\nThe default value of "
              "dim will change to agree with that of linalg.cross in a future release.", stacklevel=4)
    shape = _broadcast_pair(input._data.shape, other._data.shape)
    return next((i for i, s in enumerate(shape) if s == 3), -1)


_linalg_cross = []   # matrix_decompositions.linalg_cross, bound on first use (its imports reach this module)


@method()
def cross(input, other, dim=None, *, out=None):
    """The cross product of the 3-vectors of ``input`` and ``other`` along ``dim`` (the first
    dim of size 3 when ``dim`` is None, deprecated), broadcasting the other dims."""
    if not _linalg_cross:
        from .matrix_decompositions import linalg_cross
        _linalg_cross.append(linalg_cross)
    linalg_cross = _linalg_cross[0]
    if dim is None:
        dim = _first_dim_of_size_3(input, other)
    return _into(out, linalg_cross(input, other, dim=dim), True, "cross")


# -- as_strided, ravel ----------------------------------------------------------------------------------

def _element_positions(xp, shape, strides, offset):
    """The storage position (in elements) of every element of a strided layout."""
    pos = xp.full(shape, offset, dtype=xp.int64)
    for d, (n, st) in enumerate(zip(shape, strides)):
        pos = pos + (xp.arange(n) * st).reshape((n,) + (1,) * (len(shape) - d - 1))
    return pos


@method()
def as_strided_(self, size, stride, storage_offset=None):
    """In-place version of :func:`as_strided`: ``self`` takes the given size, strides and
    storage offset over its storage."""
    check_inplace(self)
    return take_view(self, as_strided(self, size, stride, storage_offset))


def _span(count, stride):
    """How far, in elements, ``count`` steps of ``stride`` reach past the first."""
    return (count - 1) * stride


@method()
def as_strided(input, size, stride, storage_offset=None):
    """A view of ``input``'s storage with the given ``size``, ``stride`` (in elements) and
    ``storage_offset`` (the input's own offset by default)."""
    check_tensor(input, "as_strided")
    data = input._data
    size, stride = tuple(map(int, size)), tuple(map(int, stride))
    if len(size) != len(stride):
        raise RuntimeError("mismatch in length of strides and shape")
    # checked before any view is made: NumPy's as_strided would read outside the storage
    if min(size, default=0) < 0:
        raise RuntimeError(f"Storage size calculation overflowed with sizes={list(size)} and "
                           f"strides={list(stride)}")
    if min(stride, default=0) < 0:
        raise RuntimeError(f"as_strided: Negative strides are not supported at the moment, got strides: "
                           f"{list(stride)}")
    item = data.itemsize
    if data.__class__ is np.ndarray and data.base is None:   # (its own storage, from its start)
        root, own_offset = data, 0
    else:
        backend, root, low = _storage_root(data)
        own_offset = (backend.data_ptr(data) - low) // item   # (input.storage_offset())
    offset = own_offset if storage_offset is None else int(storage_offset)
    if offset < 0:
        raise RuntimeError(f"Tensor: invalid storage offset {offset}")
    storage_len = root.nbytes // item
    needed = offset + 1 + sum(map(_span, size, stride)) if all(size) else 0
    if needed > storage_len:
        raise RuntimeError(f"setStorage: sizes {list(size)}, strides {list(stride)}, storage offset "
                           f"{offset}, and itemsize {item} requiring a storage size of {needed * item} "
                           f"are out of bounds for storage of size {storage_len * item}")
    strides = tuple([s * item for s in stride])
    if type(root) is np.ndarray and root.flags.c_contiguous:   # (a view over its buffer, at once)
        view = np.ndarray(size, data.dtype, root, min(offset * item, root.nbytes), strides)
    else:
        xp = namespace_of(data)
        flat = root.reshape(-1) if root.flags.c_contiguous else root.ravel(order="K")
        start = flat[offset:] if offset < flat.size else flat[flat.size:]
        view = xp.lib.stride_tricks.as_strided(start, size, strides)
    out = make_view(view, input)
    node = record(AsStridedBackward0, (input,), out)
    if node is not None:
        node.storage_size = storage_len
        node.out_layout = (size, stride, offset)
        node.in_layout = (data.shape, input.stride(), own_offset)
    return out


_python_as_strided = as_strided


def as_strided(input, size, stride, storage_offset=None):
    """A view of ``input``'s storage with the given ``size``, ``stride`` (in elements) and
    ``storage_offset`` (the input's own offset by default)."""
    if input.__class__ is Tensor and not _dispatch.on:   # (Tensor's method: compiled in ``_compiled_methods``)
        return Tensor.as_strided(input, size, stride, storage_offset)
    return _python_as_strided(input, size, stride, storage_offset)


@method()
def ravel(input):
    """``input`` flattened to 1-d: a view when possible, else a copy."""
    return input.reshape(-1)


__all__ += [
    "tensor_split", "hsplit", "vsplit", "dsplit", "atleast_1d", "atleast_2d", "atleast_3d",
    "dstack", "column_stack", "row_stack", "rot90", "repeat_interleave", "broadcast_shapes",
    "broadcast_to", "broadcast_tensors", "meshgrid", "cartesian_prod", "combinations",
    "diag_embed", "diag", "trace", "tril_indices", "triu_indices", "diagonal_scatter",
    "select_scatter", "slice_scatter", "block_diag", "kron", "cross", "as_strided", "ravel",
]


# Linear and dtype-preserving: their backward is the same for complex tensors.
for _node_cls in (CatBackward0, StackBackward0, FlipBackward0, RollBackward0, RepeatBackward0):
    complex_autograd(_node_cls)
