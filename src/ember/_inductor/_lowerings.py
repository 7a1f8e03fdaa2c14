"""Calls of a captured graph that are rewritten to eager's array kernels before fusion.

A backward graph holds the ops' backward formulas in ember ops; where eager's engine runs a
fused array kernel instead (``GeluBackward0.backward_arrays``: oneDNN's GELU backward where it
applies), the formula's calls are replaced by that kernel: ``grad * _gelu_grad(x)`` becomes
``gelu_backward(grad, x)``."""
from .. import Tensor
from ..autograd.grad_mode import state
from ..fx.node import Node
from ..ops._common import make
from ._pointwise import describe

__all__ = ["gelu_backward", "rewrite"]


def gelu_backward(grad, input, approximate="none"):
    """``grad * d gelu(input) / d input``: eager's array kernel, or the formula in ember ops
    where autograd records (or shapes and dtypes differ)."""
    from ..nn.functional import activation
    if (state.grad_enabled and (grad.requires_grad or input.requires_grad)) or \
            not isinstance(grad, Tensor) or grad.shape != input.shape or \
            grad.dtype != input.dtype or not input.is_floating_point() or \
            input._data.dtype.itemsize < 4:
        return grad * activation._gelu_grad(input, approximate)
    backward = activation._gelu_backward if approximate == "none" else \
        activation._gelu_tanh_backward
    return make(backward(grad._data, input._data))


def rewrite(graph):
    """Rewrite ``graph`` in place; returns how many calls were rewritten."""
    count = 0
    for node in list(graph.nodes):
        d = describe(node)
        if d is None or d[0] != "mul":
            continue
        a, b = d[1]
        for grad, factor in ((a, b), (b, a)):
            f = describe(factor) if isinstance(factor, Node) else None
            if f is None or f[0] != "gelu_grad" or len(factor.users) != 1 or \
                    not isinstance(grad, Node):
                continue
            with graph.inserting_before(node):
                new = graph.create_node("call_function", gelu_backward,
                                        (grad, f[1][0], f[2]["approximate"]), {})
            node.replace_all_uses_with(new)
            graph.erase_node(node)
            graph.erase_node(factor)
            count += 1
            break
    return count
