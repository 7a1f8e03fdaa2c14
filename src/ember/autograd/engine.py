"""The backward engine: runs graph nodes in dependency order.

From the root edges it counts, for every reachable node, how many edges lead into it; a node
runs once all of them have delivered (or declined to deliver) a gradient. Gradients arriving at
the same node output are summed. Leaves' ``AccumulateGrad`` nodes add into ``.grad``; for
``autograd.grad`` the requested inputs' gradients are captured instead, and only nodes that
lead to them run.
"""
import sys

from .grad_mode import state
from .graph import AccumulateGrad, accumulate_into, edge_of

__all__ = ["run_backward"]


def _root_edge(tensor, index):
    if not tensor._requires_grad:
        raise RuntimeError(f"element {index} of tensors does not require grad and does not have a grad_fn")
    return edge_of(tensor)


def _input_edge(tensor, index):
    if not tensor._requires_grad:
        raise RuntimeError(f"One of the differentiated Tensors does not require grad")
    return edge_of(tensor)


def _reachable(root_nodes):
    """Dependency counts of every node reachable from the roots, and a post-order of them."""
    deps = {}
    order = []
    seen = set()
    stack = [(node, False) for node in root_nodes]
    while stack:
        node, expanded = stack.pop()
        if expanded:
            order.append(node)
            continue
        if node in seen:
            continue
        seen.add(node)
        stack.append((node, True))
        for nxt, _ in node.next_functions:
            if nxt is not None:
                deps[nxt] = deps.get(nxt, 0) + 1
                if nxt not in seen:
                    stack.append((nxt, False))
    return deps, order


def _needed_nodes(order, targets):
    """Nodes from which some target node can be reached (post-order makes this one pass)."""
    needed = set()
    for node in order:
        if node in targets or any(nxt in needed for nxt, _ in node.next_functions):
            needed.add(node)
    return needed


def run_backward(roots, root_grads, retain_graph, create_graph, inputs=None, accumulate=True,
                 allow_unused=True):
    """Run backward from ``roots`` (tensors) seeded with ``root_grads``.

    With ``accumulate`` the gradients of leaves (or of ``inputs`` only, when given) are added
    into ``.grad``; otherwise the gradients reaching ``inputs`` are returned in their order.
    """
    root_edges = [_root_edge(t, i) for i, t in enumerate(roots)]
    capture = None
    if inputs is not None:
        input_edges = [_input_edge(t, i) for i, t in enumerate(inputs)]
        capture = {}
        for i, (node, nr) in enumerate(input_edges):
            capture.setdefault((node, nr), []).append(i)
    deps, order = _reachable([node for node, _ in root_edges])
    needed = None
    if capture is not None:
        needed = _needed_nodes(order, {node for node, _ in capture})

    buffers = {}
    for (node, nr), grad in zip(root_edges, root_grads):
        _add_to_buffer(buffers, node, nr, grad)
    results = [None] * len(inputs) if inputs is not None else None

    ready = []
    for node, _ in root_edges:
        if deps.get(node, 0) == 0 and node not in ready:
            ready.append(node)
    prev_grad_mode = state.grad_enabled
    state.grad_enabled = create_graph
    try:
        while ready:
            node = ready.pop()
            grads = buffers.pop(node, None)
            if grads is not None:
                grads = _call_tensor_hooks(node, grads)
                if capture is not None:
                    for nr, grad in enumerate(grads):
                        for i in capture.get((node, nr), ()):
                            results[i] = grad
            execute = grads is not None and (needed is None or node in needed)
            if execute and capture is not None and node.__class__ is AccumulateGrad:
                execute = accumulate and (node, 0) in capture
            if execute and node.__class__ is AccumulateGrad:
                # The engine's list and getrefcount's argument are the only references to a
                # gradient nobody else can see; then .grad may take it without a copy.
                owned = (sys.getrefcount(grads[0]) == 2 and grads[0]._data.base is None
                         and sys.getrefcount(grads[0]._data) == 2)
                accumulate_into(node.variable, grads[0], owned)
                input_grads = ()
            elif execute:
                input_grads = _call_node(node, grads, retain_graph)
            else:
                input_grads = ()
            for (nxt, nr), grad in zip(node.next_functions, input_grads):
                if nxt is not None and grad is not None:
                    _add_to_buffer(buffers, nxt, nr, grad)
            for nxt, _ in node.next_functions:
                if nxt is not None:
                    left = deps[nxt] - 1
                    deps[nxt] = left
                    if left == 0:
                        ready.append(nxt)
    finally:
        state.grad_enabled = prev_grad_mode
    if results is not None and not allow_unused:
        for i, r in enumerate(results):
            if r is None:
                raise RuntimeError(
                    "One of the differentiated Tensors appears to not have been used in the graph. "
                    "Set allow_unused=True if this is the desired behavior.")
    return results


def _add_to_buffer(buffers, node, nr, grad):
    grads = buffers.get(node)
    if grads is None:
        grads = buffers[node] = []
    while len(grads) <= nr:
        grads.append(None)
    old = grads[nr]
    grads[nr] = grad if old is None else old + grad


def _call_tensor_hooks(node, grads):
    hooks = node._tensor_pre_hooks
    if hooks is None and node.__class__ is AccumulateGrad:
        hooks = node.variable._leaf_hooks
        hooks = {0: hooks} if hooks else None
    if hooks:
        for nr, fns in hooks.items():
            if nr < len(grads) and grads[nr] is not None:
                for fn in list(fns):
                    new = fn(grads[nr])
                    if new is not None:
                        grads[nr] = new
    retain = node._retain_grad_hooks
    if retain:
        for nr, fn in retain.items():
            if nr < len(grads) and grads[nr] is not None:
                fn(grads[nr])
    return grads


def _call_node(node, grads, retain_graph):
    if node._pre_hooks:
        for hook in node._pre_hooks:
            new = hook(tuple(grads))
            if new is not None:
                grads = list(new)
    input_grads = node.backward(*grads)
    if node._post_hooks:
        for hook in node._post_hooks:
            new = hook(tuple(input_grads), tuple(grads))
            if new is not None:
                input_grads = new
    if not retain_graph:
        node.release()
    return input_grads
