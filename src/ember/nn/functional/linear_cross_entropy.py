"""``linear_cross_entropy``: the cross entropy of a linear projection's logits, and the
options of torch's chunked implementation of it."""
import dataclasses
import warnings

from ..._dtype import int64
from ...ops.linalg import tensordot
from .loss import cross_entropy

__all__ = ["linear_cross_entropy", "LinearCrossEntropyOptions"]


@dataclasses.dataclass(slots=True, frozen=True)
class LinearCrossEntropyOptions:
    """The settings of torch's chunked :func:`linear_cross_entropy` (the batch processed in
    pieces so that the whole logits tensor never exists). ember has no chunked implementation:
    a call that torch would run chunked raises NotImplementedError."""

    allow_retain_graph: bool = False
    batch_chunk_size: int | None = None
    chunking_method: str = "auto"
    acc_policy: str = "auto"
    acc_dtype: object = None


def linear_cross_entropy(input, linear_weight, target, *, linear_bias=None, weight=None,
                         reduction="mean", ignore_index=None, label_smoothing=0.0, options=None):
    """``cross_entropy(linear(input, linear_weight, linear_bias), target, ...)``. A
    ``linear_weight`` of shape (C, d_1, ..., d_K, in_features) gives K-dimensional logits
    (N, C, d_1, ..., d_K). ``ignore_index`` None means -100 for class-index targets."""
    if input.dim() < 1 or input.dim() > 2:
        raise RuntimeError(f"expected input with dimensionality 1 or 2, got {input.dim()}")
    if linear_weight.dim() < 2:
        raise RuntimeError("expected linear_weight with dimensionality at least 2, got "
                           f"{linear_weight.dim()}")
    num_batches = tuple(input.shape[:-1])
    in_features = input.shape[-1]
    if in_features != linear_weight.shape[-1]:
        raise RuntimeError("expected equal input and linear_weight last dimensions (in_features), "
                           f"got {input.shape[-1]} and {linear_weight.shape[-1]}, respectively")
    num_classes = linear_weight.shape[0]
    out_features = tuple(linear_weight.shape[1:-1])
    if linear_bias is not None and tuple(linear_bias.shape) != (num_classes, *out_features):
        raise RuntimeError(f"expected linear_bias shape {(num_classes, *out_features)}, got "
                           f"{tuple(linear_bias.shape)}")
    if out_features and not num_batches:
        raise RuntimeError(f"K-dimensional loss defined by linear_weight shape "
                           f"{tuple(linear_weight.shape)} requires batched input, (N, "
                           f"{in_features}), got unbatched input with shape {tuple(input.shape)}")
    logits_shape = (*num_batches, num_classes, *out_features)
    target_contains_probabilities = tuple(target.shape) == logits_shape
    if target_contains_probabilities and ignore_index is not None:
        raise RuntimeError("ignore_index cannot be specified when target contains probabilities")
    ignore_index = ignore_index if ignore_index is not None else -100
    if options is not None:
        chunkable = (not out_features and reduction in {"mean", "sum", "none"}
                     and label_smoothing == 0.0 and target.dtype == int64)
        if chunkable:
            raise NotImplementedError(
                "linear_cross_entropy with options=LinearCrossEntropyOptions(...): ember has no "
                "chunked implementation; pass options=None for the reference computation")
        warnings.warn(
            "linear_cross_entropy: ``options`` ignored; chunked path needs reduction in "
            "{'mean','sum','none'}, label_smoothing == 0, target.dtype == int64, out_features == "
            f"(). Got reduction={reduction!r}, label_smoothing={label_smoothing}, "
            f"target.dtype={target.dtype}, out_features={out_features}, tracing=False, "
            f"linear_bias.shape={tuple(linear_bias.shape) if linear_bias is not None else None}.",
            stacklevel=2)
    logits = tensordot(input, linear_weight, dims=([-1], [-1]))
    if linear_bias is not None:
        logits = logits + linear_bias
    return cross_entropy(logits, target, weight=weight, ignore_index=ignore_index,
                         reduction=reduction, label_smoothing=label_smoothing)
