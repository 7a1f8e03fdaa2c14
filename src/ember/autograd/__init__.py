"""Reverse-mode automatic differentiation: ``backward``, ``grad``, grad modes and graph nodes."""
from numpy import ndarray as _ndarray, ones as _ones

from .grad_mode import (
    enable_grad, inference_mode, is_grad_enabled, is_inference_mode_enabled, no_grad,
    set_grad_enabled,
)
from . import forward_ad, graph
from .anomaly_mode import detect_anomaly, is_anomaly_check_nan_enabled, is_anomaly_enabled, set_detect_anomaly
from .engine import run_backward
from .. import _tensor
from .function import Function, once_differentiable
from .variable import Variable

__all__ = ["backward", "grad", "no_grad", "enable_grad", "set_grad_enabled", "inference_mode",
           "is_grad_enabled", "is_inference_mode_enabled", "graph", "Function", "once_differentiable", "functional",
           "detect_anomaly", "set_detect_anomaly", "is_anomaly_enabled", "is_anomaly_check_nan_enabled",
           "gradcheck", "gradgradcheck", "forward_ad", "Variable", "variable",
           "set_multithreading_enabled"]


def _tensors(x, what):
    Tensor = _tensor.Tensor
    if isinstance(x, Tensor):
        return [x]
    if x is None:
        return []
    from .graph import GradientEdge
    out = [x] if isinstance(x, GradientEdge) else list(x)
    for t in out:
        if isinstance(t, GradientEdge):
            raise NotImplementedError(f"GradientEdge {what}: ember's autograd.grad and backward "
                                      "take tensors only")
        if t is not None and not isinstance(t, Tensor):
            raise TypeError(f"{what} must be Tensors, got {type(t).__name__}")
    return out


def _make_grads(outputs, grads):
    """Each output's gradient: the one given (checked against the output, cast to its dtype)
    or, for a one-element output, ones."""
    Size, Tensor = _tensor.Size, _tensor.Tensor
    out = []
    for i, (o, g) in enumerate(zip(outputs, grads)):
        if g is None:
            if o._requires_grad:
                g = _seed(o)
        elif not isinstance(g, Tensor):
            raise TypeError(f"gradients can be either Tensors or None, but got {type(g).__name__}")
        else:
            if g._data.shape != o._data.shape:
                raise RuntimeError(f"Mismatch in shape: grad_output[{i}] has a shape of "
                                   f"{Size(g._data.shape)} and output[{i}] has a shape of "
                                   f"{Size(o._data.shape)}.")
            if g.is_complex() != o.is_complex():
                raise RuntimeError(f"For complex Tensors, both grad_output and output are required "
                                   f"to have the same dtype. Mismatch in dtype: grad_output[{i}] has "
                                   f"a dtype of {g.dtype} and output[{i}] has a dtype of {o.dtype}.")
            if g._data.dtype != o._data.dtype:
                g = g.to(o.dtype)
        out.append(g)
    return out


def _seed(output):
    """The gradient ``backward`` starts from when none is given: ones, for a one-element
    floating-point output."""
    data = output._data
    if data.size != 1:
        raise RuntimeError("grad can be implicitly created only for scalar outputs")
    if not output.is_floating_point():
        raise RuntimeError(f"grad can be implicitly created only for real scalar outputs "
                           f"but got {output.dtype}")
    if data.__class__ is _ndarray:
        return _tensor._make(_ones(data.shape, data.dtype))
    from ..ops.creation import ones_like
    return ones_like(output)


def _as_list(tensors, length):
    """``grad_tensors`` / ``grad_outputs`` as a list: None for each output, or the tensors given."""
    if tensors is None:
        return [None] * length
    if isinstance(tensors, _tensor.Tensor):
        return [tensors]
    return list(tensors)


def _check_lengths(grads, outputs):
    if len(grads) != len(outputs):
        raise RuntimeError(f"got {len(outputs)} tensors and {len(grads)} gradients")


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, grad_variables=None,
             inputs=None):
    """Computes the sum of gradients of given tensors with respect to graph leaves, accumulating
    them in the leaves' ``.grad``; with ``inputs``, only into those tensors' ``.grad`` (non-leaf
    inputs retain their gradient)."""
    if grad_variables is not None:
        grad_tensors = grad_variables
    if (tensors.__class__ is _tensor.Tensor and grad_tensors is None and inputs is None
            and tensors._requires_grad):   # ``loss.backward()``
        run_backward((tensors,), (_seed(tensors),),
                     create_graph if retain_graph is None else retain_graph, create_graph)
        return
    if inputs is not None and not _tensors(inputs, "inputs"):
        raise RuntimeError("`inputs` argument to `backward()` cannot be empty.")
    tensors = _tensors(tensors, "tensors")
    grads = _make_grads(tensors, _as_list(grad_tensors, len(tensors)))
    _check_lengths(grads, tensors)
    if retain_graph is None:
        retain_graph = create_graph
    if inputs is not None:
        inputs = _tensors(inputs, "inputs")
        for t in inputs:
            t.retain_grad()
    run_backward(tensors, grads, retain_graph, create_graph, inputs=inputs)


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False, only_inputs=True,
         allow_unused=None, is_grads_batched=False, materialize_grads=False):
    """Computes and returns the sum of gradients of outputs with respect to the inputs
    (nothing is accumulated into ``.grad``). With ``is_grads_batched=True`` the first dimension
    of each of ``grad_outputs`` is a batch of cotangents: each gradient returned has that
    dimension first, one vector-Jacobian product per row."""
    if materialize_grads and allow_unused is False:
        raise ValueError("Expected allow_unused to be True or not passed when materialize_grads=True, "
                         "but got: allow_unused=False.")
    if allow_unused is None:
        allow_unused = materialize_grads
    outputs = _tensors(outputs, "outputs")
    inputs = _tensors(inputs, "inputs")
    if not inputs:
        raise RuntimeError("`inputs` argument to `grad()` cannot be empty.")
    if retain_graph is None:
        retain_graph = create_graph
    if is_grads_batched:
        from ._batched_grads import batched_grad
        return tuple(batched_grad(outputs, inputs, _as_list(grad_outputs, len(outputs)),
                                  retain_graph, create_graph, allow_unused, materialize_grads))
    else:
        grads = _make_grads(outputs, _as_list(grad_outputs, len(outputs)))
        _check_lengths(grads, outputs)
        results = run_backward(outputs, grads, retain_graph, create_graph, inputs=inputs,
                               accumulate=False, allow_unused=allow_unused)
    if materialize_grads:
        from ..ops.creation import zeros_like
        results = [zeros_like(t) if r is None else r for t, r in zip(inputs, results)]
    return tuple(results)


from .gradcheck import gradcheck, gradgradcheck  # noqa: E402
from .grad_mode import set_multithreading_enabled  # noqa: E402


def variable(*args, **kwargs):
    """Removed in torch: raises, pointing to ``ember.tensor``."""
    raise RuntimeError("torch.autograd.variable(...) is deprecated, use torch.tensor(...) instead")
from . import functional  # noqa: E402
