"""``autograd.grad(..., is_grads_batched=True)``: the first dimension of every ``grad_output``
is a batch of cotangents, and each input's gradient gets the same first dimension.

torch runs the backward pass once under vmap. ember's backward formulas read the arrays and
shapes of the gradients they are given, which vmap's BatchedTensor does not expose, so here the
backward runs once per row of the batch (the graph kept until the last row) and the rows'
gradients are stacked: the same values, one backward pass per row.
"""
from .engine import run_backward

__all__ = ["batched_grad"]


def batched_grad(outputs, inputs, grad_outputs, retain_graph, create_graph, allow_unused,
                 materialize):
    """The gradients of ``outputs`` with respect to ``inputs`` for each row of the batched
    ``grad_outputs``, stacked along a new first dimension (None for an input no row reaches,
    zeros with ``materialize``)."""
    from .._tensor import Size, Tensor
    from ..ops.shape import stack
    if len(grad_outputs) != len(outputs):
        raise RuntimeError(f"got {len(outputs)} tensors and {len(grad_outputs)} gradients")
    sizes = set()
    for i, (o, g) in enumerate(zip(outputs, grad_outputs)):
        if g is None:
            raise RuntimeError("grad can be implicitly created only for scalar outputs")
        if not isinstance(g, Tensor):
            raise TypeError(f"gradients can be either Tensors or None, but got {type(g).__name__}")
        if g._data.ndim == 0 or g._data.shape[1:] != o._data.shape:
            raise RuntimeError(
                "If `is_grads_batched=True`, we interpret the first dimension of each grad_output as "
                "the batch dimension. The sizes of the remaining dimensions are expected to match the "
                f"shape of corresponding output, but a mismatch was detected: grad_output[{i}] has a "
                f"shape of {Size(g._data.shape[1:])} and output[{i}] has a shape of "
                f"{Size(o._data.shape)}. If you only want some tensors in `grad_output` to be "
                "considered batched, consider using vmap.")
        sizes.add(g._data.shape[0])
    if len(sizes) > 1:
        raise RuntimeError(f"Expected all grad_outputs to have the same batch size, got sizes "
                           f"{sorted(sizes)}")
    size = sizes.pop()
    rows = []
    for b in range(size):
        grads = [g[b] if g._data.dtype == o._data.dtype else g[b].to(o.dtype)
                 for o, g in zip(outputs, grad_outputs)]
        keep = retain_graph or b < size - 1
        rows.append(run_backward(outputs, grads, keep, create_graph, inputs=inputs,
                                 accumulate=False, allow_unused=allow_unused))
    result = []
    for i, t in enumerate(inputs):
        found = [r[i] for r in rows]
        if size == 0 or all(g is None for g in found):
            result.append(_zeros_batch(t, size) if materialize or not size else None)
            continue
        result.append(stack([_zeros_like(t) if g is None else g for g in found]))
    return result


def _zeros_like(t):
    from ..ops.creation import zeros_like
    return zeros_like(t)


def _zeros_batch(t, size):
    from ..ops.creation import zeros
    return zeros((size,) + tuple(t.shape), dtype=t.dtype, device=t.device)
