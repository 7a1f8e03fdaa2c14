"""Embedding lookups: ``embedding``, ``embedding_bag`` and ``one_hot``."""
from ...autograd.grad_mode import no_grad
from ...ops._common import Node, make, namespace_of, record
from ...autograd.graph import bump_version
from ..._backend.rows import MAX_RUN_BY_POSITION, add_rows_at  # noqa: F401  (tests read the first)
from ...autograd._dual import jvp_by_transposition
from ...autograd.saved_fields import array_attribute, constant
from ..._torch_function import override_or_raise

__all__ = ["embedding", "embedding_bag", "one_hot"]


class EmbeddingBackward0(Node):
    __slots__ = ()
    saved_fields = {"indices": array_attribute("indices"), "weight_sym_argsize_0": "num_weights",
                    "padding_idx": lambda node: -1 if node.padding_idx is None else node.padding_idx,
                    "scale_grad_by_freq": lambda node: node.counts is not None,
                    "sparse": constant(False)}
    jvp = jvp_by_transposition
    sparse = False   # a sparse COO gradient for the weight (``sparse=True``)

    def backward(self, grad):
        if self.sparse:
            return (_embedding_sparse_backward(grad, self.indices, self.num_weights,
                                               self.padding_idx, self.counts),)
        return (_embedding_dense_backward(grad, self.indices, self.num_weights, self.padding_idx,
                                          self.counts),)


class EmbeddingDenseBackward0(Node):
    """The scatter-add of embedding's backward; its own gradient is a lookup again."""

    __slots__ = ()
    jvp = jvp_by_transposition

    def backward(self, grad):
        return (_lookup(grad, self.indices, self.padding_idx, self.counts),)


def _lookup(weight, indices, padding_idx, counts, sparse=False):
    """``weight[indices]`` (rows of ``padding_idx`` and the ``counts`` scaling affect only
    the gradient)."""
    out = make(namespace_of(weight._data).take(weight._data, indices, axis=0))
    node = record(EmbeddingBackward0, (weight,), out)
    if node is not None:
        node.indices, node.num_weights = indices, weight.shape[0]
        node.padding_idx, node.counts = padding_idx, counts
        if sparse:
            node.sparse = True
    return out


def _embedding_sparse_backward(grad, indices, num_weights, padding_idx, counts):
    """The weight's gradient as an uncoalesced sparse tensor: one entry per looked-up index
    (repeats included, ``padding_idx`` left out), as torch's."""
    from ...sparse._coo import sparse_of
    if counts is not None:
        raise RuntimeError("embedding_backward: scale_grad_by_freq not supported with sparse gradients")
    data = grad._data
    dim = data.shape[-1]
    rows = data.reshape(-1, dim)
    flat = indices.reshape(-1)
    if padding_idx is not None:
        kept = flat != padding_idx
        rows, flat = rows[kept], flat[kept]
    return sparse_of(flat.astype("int64")[None], rows.astype(data.dtype, copy=False),
                     (num_weights, dim), False)


def _embedding_dense_backward(grad, indices, num_weights, padding_idx, counts):
    data = grad._data
    xp = namespace_of(data)
    dim = data.shape[-1]
    rows = data.reshape(-1, dim)
    flat = indices.reshape(-1)
    if counts is not None:
        rows = rows / counts[flat][:, None]
    if padding_idx is not None:
        rows = rows * (flat != padding_idx)[:, None]
    result = make(_sum_rows_by_index(xp, rows, flat, num_weights))
    node = record(EmbeddingDenseBackward0, (grad,), result)
    if node is not None:
        node.indices, node.padding_idx, node.counts = indices, padding_idx, counts
    return result


def _sum_rows_by_index(xp, rows, flat, num_weights):
    """An array (num_weights, D) whose row ``i`` sums the ``rows`` (M, D) with ``flat == i``,
    in the order of ``rows`` (as ``add.at``)."""
    return add_rows_at(xp.zeros((num_weights, rows.shape[1]), rows.dtype), flat, rows)


def _renorm_(weight, indices, max_norm, norm_type):
    """Rescale in place the rows of ``weight`` looked up by ``indices`` whose ``norm_type``
    norm exceeds ``max_norm`` to norm ``max_norm`` (no gradient)."""
    data = weight._data
    xp = namespace_of(data)
    rows = xp.unique(indices.reshape(-1))
    norms = xp.linalg.norm(data[rows].astype("float64"), ord=norm_type, axis=1)
    over = norms > max_norm
    if over.any():
        scale = max_norm / (norms[over] + 1e-7)
        data[rows[over]] *= scale[:, None].astype(data.dtype)
        bump_version(weight)


def _padding_index(padding_idx, num_weights):
    if padding_idx is None:
        return None
    if padding_idx >= 0:
        if padding_idx >= num_weights:
            raise AssertionError("Padding_idx must be within num_embeddings")
        return padding_idx
    if padding_idx < -num_weights:
        raise AssertionError("Padding_idx must be within num_embeddings")
    return padding_idx + num_weights


def _check_indices(input, num_weights):
    if input._data.dtype.kind not in "iu":
        raise RuntimeError("Expected tensor for argument #1 'indices' to have one of the following "
                           "scalar types: Long, Int; but got "
                           f"{input.type()} instead (while checking arguments for embedding)")
    idx = input._data
    if idx.size and (idx.min() < 0 or idx.max() >= num_weights):
        raise IndexError("index out of range in self")
    return idx


def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0,
              scale_grad_by_freq=False, sparse=False):
    """Look up rows of ``weight`` by the indices in ``input``; the row ``padding_idx`` gets no
    gradient; with ``max_norm``, looked-up rows are renormalized in place first. With
    ``sparse=True`` the gradient of ``weight`` is a sparse COO tensor."""
    try:
        num_weights = weight.shape[0]
        padding_idx = _padding_index(padding_idx, num_weights)
        idx = _check_indices(input, num_weights)
        if max_norm is not None:
            with no_grad():
                _renorm_(weight, idx, max_norm, norm_type)
        counts = None
        if scale_grad_by_freq:
            xp = namespace_of(idx)
            counts = xp.bincount(idx.reshape(-1), minlength=num_weights).astype(weight._data.dtype)
        return _lookup(weight, idx, padding_idx, counts, sparse)
    except (AttributeError, TypeError) as error:   # a tensor-like argument's override
        return override_or_raise(embedding, error, input, weight, padding_idx, max_norm, norm_type,
                                 scale_grad_by_freq, sparse)


def embedding_bag(input, weight, offsets=None, max_norm=None, norm_type=2, scale_grad_by_freq=False,
                  mode="mean", sparse=False, per_sample_weights=None, include_last_offset=False,
                  padding_idx=None):
    """Sums, averages or takes the max of bags of embeddings without building the
    intermediate embeddings per bag: ``input`` (B, L) holds fixed-size bags, or ``input``
    (n,) with ``offsets`` the start of each bag."""
    from ...ops.creation import zeros
    from ...ops.shape import cat
    from ...ops.ternary import where
    if mode not in ("sum", "mean", "max"):
        raise ValueError("mode has to be one of sum, mean or max")
    if mode == "max" and sparse:
        raise ValueError("max mode does not support sparse weights")
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError(f"embedding_bag: per_sample_weights was not None. "
                                  f"per_sample_weights is only supported for mode='sum' (got "
                                  f"mode='{mode}'). Please open a feature request on GitHub.")
    bags, lengths = _bag_layout(input, offsets, include_last_offset)
    num_weights = weight.shape[0]
    padding_idx = _padding_index(padding_idx, num_weights)
    flat = input.reshape(-1)
    rows = embedding(flat, weight, padding_idx, max_norm, norm_type, scale_grad_by_freq, sparse)
    if per_sample_weights is not None:
        if per_sample_weights.shape != input.shape:
            raise ValueError(f"embedding_bag: If per_sample_weights ({list(per_sample_weights.shape)}) "
                             f"is not None, then it must have the same shape as the input "
                             f"({list(input.shape)})")
        rows = rows * per_sample_weights.reshape(-1, 1)
    xp = namespace_of(bags)
    idx = flat._data
    kept = bags >= 0
    if padding_idx is not None:
        kept &= (idx[xp.clip(bags, 0, None)] != padding_idx)
    sentinel = rows.shape[0]
    fill = float("-inf") if mode == "max" else 0.0
    padded = cat([rows, zeros(1, weight.shape[1], dtype=weight.dtype) + fill])
    members = padded[make(xp.where(kept, bags, sentinel))]  # (B, Lmax, D)
    count = kept.sum(axis=1)
    if mode == "sum":
        return members.sum(1)
    if mode == "mean":
        return members.sum(1) / make(xp.maximum(count, 1).astype(rows._data.dtype)[:, None])
    out = members.amax(1) if members.shape[1] else zeros(len(count), weight.shape[1],
                                                         dtype=weight.dtype)
    return where(make(count[:, None] > 0), out, 0.0)


def _bag_layout(input, offsets, include_last_offset):
    """A (B, Lmax) array of positions into the flattened input (-1 where a bag is shorter)."""
    xp = namespace_of(input._data)
    if input.ndim == 2:
        if offsets is not None:
            raise ValueError("if input is 2D, then offsets has to be None, as input is treated is "
                             "a mini-batch of fixed length sequences. However, found offsets of "
                             f"type {type(offsets).__name__}")
        b, length = input.shape
        return xp.arange(b * length).reshape(b, length), xp.full(b, length)
    if input.ndim != 1:
        raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension {input.ndim}")
    if offsets is None:
        raise ValueError("offsets has to be a 1D Tensor but got None")
    if offsets.ndim != 1:
        raise ValueError("offsets has to be a 1D Tensor")
    n = input.shape[0]
    starts = offsets._data.astype("int64")
    ends = xp.concatenate([starts[1:], xp.asarray([n])])
    if include_last_offset:
        starts, ends = starts[:-1], xp.minimum(starts[1:], n)
    lengths = xp.maximum(ends - starts, 0)
    width = int(lengths.max()) if lengths.size else 0
    pos = starts[:, None] + xp.arange(width)[None, :]
    return xp.where(xp.arange(width)[None, :] < lengths[:, None], pos, -1), lengths


def one_hot(tensor, num_classes=-1):
    """Takes LongTensor with index values of shape ``(*)`` and returns a tensor of shape
    ``(*, num_classes)`` that has zeros everywhere except where the index of last dimension
    matches the corresponding value of the input tensor, in which case it will be 1."""
    data = tensor._data
    if data.dtype.kind not in "iu":
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    xp = namespace_of(data)
    if num_classes == -1:
        if data.size == 0:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
        num_classes = int(data.max()) + 1
    if data.size:
        if data.min() < 0:
            raise RuntimeError("Class values must be non-negative.")
        if data.max() >= num_classes:
            raise RuntimeError("Class values must be smaller than num_classes.")
    # zeros, then a 1 at each element's flat position: one write per element, where the
    # comparison with every class wrote all (N, C) twice (``benchmarks/names_mlp_ops.py``)
    out = xp.zeros((*data.shape, num_classes), "int64")
    out.reshape(-1)[xp.arange(data.size) * num_classes + data.reshape(-1)] = 1
    return make(out)
