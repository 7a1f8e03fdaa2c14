"""Reverse-mode automatic differentiation: ``backward``, ``grad``, grad modes and graph nodes."""
from .grad_mode import (
    enable_grad, inference_mode, is_grad_enabled, is_inference_mode_enabled, no_grad,
    set_grad_enabled,
)
from . import graph
from .engine import run_backward

__all__ = ["backward", "grad", "no_grad", "enable_grad", "set_grad_enabled", "inference_mode",
           "is_grad_enabled", "graph"]


def _tensors(x, what):
    from .._tensor import Tensor
    if isinstance(x, Tensor):
        return [x]
    if x is None:
        return []
    out = list(x)
    for t in out:
        if t is not None and not isinstance(t, Tensor):
            raise TypeError(f"{what} must be Tensors, got {type(t).__name__}")
    return out


def _make_grads(outputs, grads, is_grads_batched=False):
    from .._tensor import Tensor
    from ..ops.creation import ones_like
    out = []
    for i, (o, g) in enumerate(zip(outputs, grads)):
        if g is None:
            if o._requires_grad:
                if o._data.size != 1:
                    raise RuntimeError("grad can be implicitly created only for scalar outputs")
                if not (o.is_floating_point() or o.is_complex()):
                    raise RuntimeError(f"grad can be implicitly created only for real scalar outputs "
                                       f"but got {o.dtype}")
            g = ones_like(o)
        elif not isinstance(g, Tensor):
            raise TypeError(f"gradients can be either Tensors or None, but got {type(g).__name__}")
        elif g._data.shape != o._data.shape:
            from .._tensor import Size
            raise RuntimeError(f"Mismatch in shape: grad_output[{i}] has a shape of {Size(g._data.shape)} "
                               f"and output[{i}] has a shape of {Size(o._data.shape)}.")
        elif g.is_floating_point() != o.is_floating_point() and not g.is_complex():
            raise RuntimeError(f"For complex Tensors, both grad_output and output are required to have "
                               f"the same dtype. Mismatch in dtype: grad_output[{i}] has a dtype of "
                               f"{g.dtype} and output[{i}] has a dtype of {o.dtype}.")
        out.append(g)
    return out


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, grad_variables=None,
             inputs=None):
    """Computes the sum of gradients of ``tensors`` with respect to graph leaves, accumulating
    them in the leaves' ``.grad`` (only into ``inputs``, when given)."""
    if grad_variables is not None:
        grad_tensors = grad_variables
    tensors = _tensors(tensors, "tensors")
    if grad_tensors is None:
        grad_tensors = [None] * len(tensors)
    else:
        grad_tensors = _tensors(grad_tensors, "grad_tensors") if not isinstance(grad_tensors, (list, tuple)) else list(grad_tensors)
    if len(grad_tensors) != len(tensors):
        raise RuntimeError(f"got {len(grad_tensors)} tensors and {len(tensors)} gradients")
    if inputs is not None:
        inputs = _tensors(inputs, "inputs")
        if not inputs:
            raise RuntimeError("'inputs' argument to backward() cannot be empty.")
    if retain_graph is None:
        retain_graph = create_graph
    grads = _make_grads(tensors, grad_tensors)
    if inputs is not None:
        for t in inputs:
            if not t._requires_grad:
                raise RuntimeError("One of the differentiated Tensors does not require grad")
        results = run_backward(tensors, grads, retain_graph, create_graph, inputs=inputs, accumulate=False)
        from .graph import accumulate_into
        from .grad_mode import state
        prev = state.grad_enabled
        state.grad_enabled = create_graph
        try:
            for t, g in zip(inputs, results):
                if g is None:
                    continue
                if t.grad_fn is None:
                    accumulate_into(t, g, owned=False)
                elif t._retains_grad:
                    t._grad = g if t._grad is None else t._grad + g
        finally:
            state.grad_enabled = prev
        return
    run_backward(tensors, grads, retain_graph, create_graph)


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False, only_inputs=True,
         allow_unused=None, is_grads_batched=False, materialize_grads=False):
    """Computes and returns the sum of gradients of ``outputs`` with respect to ``inputs``
    (nothing is accumulated into ``.grad``)."""
    single_input = not isinstance(inputs, (list, tuple))
    outputs = _tensors(outputs, "outputs")
    inputs = _tensors(inputs, "inputs")
    if not inputs:
        raise RuntimeError("grad requires non-empty inputs.")
    if grad_outputs is None:
        grad_outputs = [None] * len(outputs)
    else:
        grad_outputs = _tensors(grad_outputs, "grad_outputs")
    if len(grad_outputs) != len(outputs):
        raise RuntimeError(f"grad_outputs has {len(grad_outputs)} tensors but outputs has {len(outputs)}")
    if allow_unused is None:
        allow_unused = materialize_grads
    if materialize_grads and not allow_unused:
        raise ValueError("Expected allow_unused to be True or not passed when materialize_grads=True, "
                         "but got: allow_unused=False.")
    if retain_graph is None:
        retain_graph = create_graph
    grads = _make_grads(outputs, grad_outputs)
    results = run_backward(outputs, grads, retain_graph, create_graph, inputs=inputs,
                           accumulate=False, allow_unused=allow_unused)
    if materialize_grads:
        from ..ops.creation import zeros_like
        results = [zeros_like(t) if r is None else r for t, r in zip(inputs, results)]
    return tuple(results)
from .gradcheck import gradcheck, gradgradcheck  # noqa: E402,F401
