"""The backward engine: runs graph nodes in dependency order.

From the root edges it counts, for every reachable node, how many edges lead into it; a node
runs once all of them have been processed. Gradients arriving at the same node output are
summed. Leaves' ``AccumulateGrad`` nodes add into ``.grad``.

A leaf's first gradient becomes its ``.grad`` without a copy unless someone else may hold it.
``held`` marks, for one backward pass, the nodes a gradient of which may be held elsewhere: the
roots' (the gradients given to backward), those whose gradients user code saw or made (hooks,
custom Functions, module backward hooks: nodes with ``_has_hooks``), and those given a view or
the very tensor of a marked node's gradient, or the same memory as another input of the node
that made it. What built-in formulas make, and the engine's sums, are the engine's alone.
Small gradients (``SMALL_GRAD_ELEMENTS``) are not tracked: a leaf always copies them, and the
engine writes in place only into the sums it made itself.

When ``inputs`` are given, only the nodes that lead to them run (torch's ``exec_info``): for
``autograd.grad`` the gradients reaching the inputs are captured and returned, for
``backward(inputs=...)`` only the inputs' accumulators run.
"""
import threading

from numpy import add as _np_add

from .. import _tensor
from .._backend.openmp_kernels import BINARY_MIN_BYTES as _BINARY_MIN_BYTES
from ._compiled import loop as compiled_loop
from ._dual import forward
from .anomaly_mode import anomaly, checked_backward
from .grad_mode import state
from .graph import AccumulateGrad, accumulate_into, edge_of, modifier_recording

__all__ = ["run_backward", "queue_callback", "releases_after_run"]

_BY_USER = 2      # in ``held`` terms: user code saw the gradients a node sent
# Gradients of at most this many elements are never stored as a leaf's ``.grad`` uncopied, so
# the engine does not track who may hold them: copying one costs less than the tracking.
SMALL_GRAD_ELEMENTS = 64
_callbacks = []   # run once the outermost backward in progress finishes
_depth = [0]      # how many backward passes are running (nested ones from hooks)
_compiled = [False]   # (dependencies, run_all) compiled: built at the first backward; None where they cannot be


class _Running(threading.local):
    released = None  # the node this thread runs now, when it is released right after


_running = _Running()


def releases_after_run(node):
    """Whether ``node`` is being run by a backward pass that releases its saved state as soon as
    it returns (no ``retain_graph``). Only then may its backward overwrite buffers it kept,
    instead of copying them. Only nodes whose class overrides ``Node.release`` (what such
    buffers are freed by) are told."""
    return _running.released is node


def queue_callback(callback):
    """Queue ``callback()`` to run when the backward pass in progress finishes (torch's
    ``Variable._execution_engine.queue_callback``)."""
    if not _depth[0]:
        raise RuntimeError("Final callbacks can only be installed during backward pass.")
    _callbacks.append(callback)


def _run_callbacks():
    while _callbacks:
        _callbacks.pop(0)()


def _root_edge(tensor, index):
    if not tensor._requires_grad:
        raise RuntimeError(f"element {index} of tensors does not require grad and does not have a grad_fn")
    return edge_of(tensor)


def _input_edge(tensor):
    if not tensor._requires_grad:
        raise RuntimeError("One of the differentiated Tensors does not require grad")
    return edge_of(tensor)


def _compiled_steps():
    """The compiled ``_dependencies`` and ``_run_all`` loop, built at the first call; None
    where they cannot be built (``autograd._compiled``)."""
    if _compiled[0] is False:
        _compiled[0] = compiled_loop(dict(
            Tensor=_tensor.Tensor, AccumulateGrad=AccumulateGrad, _Summed=_Summed, running=_running,
            run_with_hooks=_run_with_hooks, add_to_buffer=_add_to_buffer, add_in_place=_add_in_place,
            mark_if_shared=_mark_if_shared, as_tuple=_as_tuple, small_grad_elements=SMALL_GRAD_ELEMENTS,
            make=_tensor._make, modifier_recording=modifier_recording, engine_namespace=globals(),
            **_OWN_ACCUMULATION))
    return _compiled[0]


def _dependencies(root_nodes):
    """For every node reachable from the roots, the number of edges that lead into it."""
    compiled = _compiled[0] or _compiled_steps()
    if compiled is not None:
        return compiled[0](root_nodes)
    deps = dict.fromkeys(root_nodes, 0)
    stack = list(root_nodes)
    pop, push = stack.pop, stack.append
    while stack:
        for nxt, _ in pop().next_functions:
            if nxt is not None:
                if nxt in deps:
                    deps[nxt] += 1
                else:
                    deps[nxt] = 1
                    push(nxt)
    return deps


def _leading_to(root_nodes, targets):
    """The nodes from which some target can be reached (targets included)."""
    leads = {}

    def visit(start):
        stack = [(start, iter(start.next_functions))]
        leads[start] = start in targets
        while stack:
            node, edges = stack[-1]
            for nxt, _ in edges:
                if nxt is None:
                    continue
                if nxt not in leads:
                    leads[nxt] = nxt in targets
                    stack.append((nxt, iter(nxt.next_functions)))
                    break
                if leads[nxt]:
                    leads[node] = True
            else:
                stack.pop()
                if stack and leads[node]:
                    leads[stack[-1][0]] = True

    for root in root_nodes:
        if root not in leads:
            visit(root)
    return {node for node, lead in leads.items() if lead}


class _Plan:
    """Which nodes run, for a backward restricted to ``inputs``."""

    __slots__ = ("visit", "execute", "captures")

    def __init__(self, root_nodes, input_edges):
        self.captures = {}
        for i, (node, nr) in enumerate(input_edges):
            self.captures.setdefault(node, []).append((nr, i))
        self.visit = _leading_to(root_nodes, self.captures)
        visit = self.visit
        self.execute = {node for node in visit
                        if any(nxt in visit for nxt, _ in node.next_functions)}


def run_backward(roots, root_grads, retain_graph, create_graph, inputs=None, accumulate=True,
                 allow_unused=True):
    """Run backward from ``roots`` (tensors) seeded with ``root_grads``.

    With ``accumulate`` the gradients of leaves (or of ``inputs`` only, when given) are added
    into ``.grad``; otherwise the gradients reaching ``inputs`` are returned in their order.
    """
    root_edges = [_root_edge(t, i) for i, t in enumerate(roots)]
    root_nodes = list(dict.fromkeys(node for node, _ in root_edges))
    plan = None
    results = None
    if inputs is not None:
        plan = _Plan(root_nodes, [_input_edge(t) for t in inputs])
        results = [None] * len(inputs)
    deps = _dependencies(root_nodes)
    buffers = {}
    held = {}
    for (node, nr), grad in zip(root_edges, root_grads):
        _add_to_buffer(buffers, held, node, nr, grad)
        held[node] = True
    ready = [node for node in root_nodes
             if not deps[node] and (plan is None or node in plan.visit)]
    prev_grad_mode = state.grad_enabled
    state.grad_enabled = create_graph
    _depth[0] += 1
    try:
        if plan is None:
            _run_all(ready, deps, buffers, held, retain_graph, anomaly.enabled)
        else:
            _run_planned(ready, deps, buffers, held, retain_graph, plan, results, accumulate)
    except BaseException:
        if _depth[0] == 1:
            _callbacks.clear()
        raise
    finally:
        _running.released = None
        _depth[0] -= 1
        state.grad_enabled = prev_grad_mode
    if not _depth[0] and _callbacks:
        _run_callbacks()
    if results is not None and not allow_unused:
        for i, r in enumerate(results):
            if r is None:
                raise RuntimeError(
                    f"The differentiated Tensor at index {i} appears to not have been used in the "
                    "graph. Set allow_unused=True if this is the desired behavior.")
    return results


def _run_all(ready, deps, buffers, held, retain_graph, checked):
    """The common case: every reachable node runs, every reached leaf accumulates. Nodes with
    hooks, and all nodes when ``checked`` (anomaly detection), take the slower path. Where the
    compiled loop is built (``_compiled_engine``), it runs these same steps instead."""
    # no graph of the backward and no tangents to carry through it: backward_arrays may run
    arrays_ok = not state.grad_enabled and not forward.active
    compiled = _compiled[0] or _compiled_steps()
    if compiled is not None:
        return compiled[1](ready, deps, buffers, held, retain_graph, checked, arrays_ok)
    pop_ready, push_ready, pop_buffer = ready.pop, ready.append, buffers.pop
    while ready:
        node = pop_ready()
        grads = pop_buffer(node, None)
        edges = node.next_functions
        if grads is None:
            if not retain_graph:
                node.release()  # what it saved is not needed any more, as if it had run
            _skip(edges, deps, push_ready)
            continue
        seen = held.pop(node, 0) if held else 0
        if node._has_hooks or checked:  # AccumulateGrad has them by class
            input_grads = _run_with_hooks(node, grads, seen, retain_graph)
            if input_grads is None:
                continue
            seen = _BY_USER
        else:
            plain = node._plain_release
            if not (retain_graph or plain):
                _running.released = node  # until the next node runs: run_backward resets it
            fast = node.backward_arrays if arrays_ok else None
            if fast is None or (input_grads := fast(*grads)) is None:
                input_grads = node.backward(*grads)
            if not retain_graph:
                if plain:
                    node._saved = None
                else:
                    node.release()
            if input_grads.__class__ is not tuple:
                input_grads = _as_tuple(input_grads)
        sent = 0
        for (nxt, nr), grad in zip(edges, input_grads):
            if nxt is None:
                continue
            if grad is not None:
                sent += 1
                if nr == 0 and nxt not in buffers:
                    buffers[nxt] = [grad]
                elif nr == 0 and (old := buffers[nxt]).__class__ is _Summed:   # a leaf's, say
                    _add_in_place(old[0], grad)
                else:
                    _add_to_buffer(buffers, held, nxt, nr, grad)
            if deps[nxt] == 1:   # the last edge into it
                push_ready(nxt)
            else:
                deps[nxt] -= 1
        if seen or sent > 1:
            _mark_if_shared(held, edges, input_grads, grads, seen)


def _run_with_hooks(node, grads, seen, retain_graph):
    """Run a node with hooks (or any node under anomaly detection): a leaf's accumulator, which
    returns None, or another node, whose gradients for its inputs are returned."""
    if node.__class__ is AccumulateGrad:
        _run_accumulate(node, grads, not seen)
        return None
    input_grads = _call_node(node, _call_tensor_hooks(node, grads), retain_graph)
    if len(input_grads) != len(node.next_functions):   # (built-in nodes return one per edge)
        raise _wrong_count(node, node.next_functions, input_grads)
    return input_grads


def _mark_if_shared(held, edges, input_grads, grads, seen):
    """After a node that was given a gradient someone else may hold (``seen``) or that sent
    more than one: mark what it sent that may be held elsewhere (``_mark_held``), unless the
    gradients are small (never tracked) or plainly apart."""
    given = grads[0]
    if given.__class__ is _tensor.Tensor and given._data.size <= SMALL_GRAD_ELEMENTS:
        return
    if not _apart(input_grads, grads, seen):
        _mark_held(held, edges, input_grads, grads, seen)


def _apart(input_grads, grads, seen):
    """Whether the gradients a node returned are arrays of their own, each in memory that no
    other of them nor (when ``seen``) a gradient it was given uses: the common case, in which
    ``_mark_held`` has nothing to mark (it is only asked when this says no)."""
    if seen == _BY_USER:
        return False
    if len(input_grads) == 2 and len(grads) == 1:   # a binary op's two gradients
        a, b = input_grads
        if a is None or b is None:
            if not seen:
                return True
        elif a.__class__ is _tensor.BlockedTensor or b.__class__ is _tensor.BlockedTensor:
            pass   # (the general walk below finds their buffers)
        else:
            a, b = a._data, b._data
            if a is b or a.base is not None or b.base is not None:
                return False
            given = grads[0]
            if not seen or given is None:
                return True
            memory = given._data
            if memory.base is not None:
                memory = _memory(given)
            return memory is not a and memory is not b
    memories = []
    for grad in input_grads:
        if grad is not None:
            if grad.__class__ is _tensor.BlockedTensor:
                memories.append(_memory(grad))
                continue
            data = grad._data
            if data.base is not None:
                return False
            memories.append(data)
    if seen:
        memories += [_memory(g) for g in grads if g is not None]
    if len(memories) == 2:
        return memories[0] is not memories[1]
    if len(memories) == 3:
        a, b, c = memories
        return a is not b and a is not c and b is not c
    return len({id(m) for m in memories}) == len(memories)


def _mark_held(held, edges, input_grads, grads, seen):
    """Mark the nodes a node sent gradients to that may be held elsewhere: all of them when
    ``seen`` is ``_BY_USER`` (user code saw them), those in the memory of a given gradient when
    ``seen`` (one given may be held elsewhere), and any two in the same memory."""
    if len(input_grads) == 1 and seen != _BY_USER:   # a one-input node given a held gradient
        grad, nxt = input_grads[0], edges[0][0]
        if grad is not None and nxt is not None:
            memory = _memory(grad)
            if any(g is not None and _memory(g) is memory for g in grads):
                held[nxt] = True
        return
    if not seen and len(input_grads) == 2:
        a, b = input_grads
        if a is b and a is not None and (a.__class__ is _tensor.BlockedTensor or a._data.base is None):
            held[edges[0][0]] = held[edges[1][0]] = True   # add's gradient, sent twice
            return
    sent = [(nxt, grad) for (nxt, _), grad in zip(edges, input_grads)
            if nxt is not None and grad is not None]
    blocked = any(grad.__class__ is _tensor.BlockedTensor for _, grad in sent)
    if not seen and len(sent) == 2 and not blocked:  # the common case: two arrays of their own
        (first, a), (second, b) = sent
        a, b = a._data, b._data
        if a.base is None and b.base is None:
            if a is b:
                held[first] = held[second] = True
            return
    if seen == _BY_USER:
        for nxt, _ in sent:
            held[nxt] = True
        return
    memories = [_memory(grad) for _, grad in sent]
    if seen:
        memories += [_memory(g) for g in grads if g is not None]
    uses = {}       # (one pass: a compiled region's node sends dozens of gradients)
    for memory in memories:
        uses[id(memory)] = uses.get(id(memory), 0) + 1
    for (nxt, _), memory in zip(sent, memories):
        if uses[id(memory)] > 1:
            held[nxt] = True


def _memory(tensor):
    """What owns a tensor's memory: the end of its array's chain of bases."""
    array = _tensor.blocked_array(tensor)
    memory = tensor._data if array is None else array.buffer
    base = memory.base
    while base is not None:
        memory, base = base, getattr(base, "base", None)
    return memory


def _whole(data):
    """Whether ``data`` is an array of its own or a C-contiguous view of all of one: the
    layouts ``.grad`` keeps uncopied."""
    base = data.base
    return base is None or (data.flags.c_contiguous and getattr(base, "base", None) is None
                            and getattr(base, "size", None) == data.size)


def _skip(edges, deps, push_ready):
    """A node no gradient reached: its inputs stop waiting for it."""
    for nxt, _ in edges:
        if nxt is not None:
            left = deps[nxt] - 1
            deps[nxt] = left
            if not left:
                push_ready(nxt)


def _wrong_count(node, edges, input_grads):
    return RuntimeError(f"function {node.name()} returned an incorrect number of gradients "
                        f"(expected {len(edges)}, got {len(input_grads)})")


def _run_planned(ready, deps, buffers, held, retain_graph, plan, results, accumulate):
    """Backward restricted to the nodes that lead to ``plan.captures``."""
    visit, execute, captures = plan.visit, plan.execute, plan.captures
    while ready:
        node = ready.pop()
        grads = buffers.pop(node, None)
        seen = held.pop(node, 0) if held else 0
        edges = node.next_functions
        if grads is not None:
            grads = _call_tensor_hooks(node, grads)
            for nr, i in captures.get(node, ()):
                if nr < len(grads):
                    results[i] = grads[nr]
            if node.__class__ is AccumulateGrad:
                if accumulate and node in captures:
                    _run_accumulate(node, grads, not seen, hooked=True)
            elif node in execute:
                input_grads = _call_node(node, grads, retain_graph)
                for (nxt, nr), grad in zip(edges, input_grads):
                    if grad is not None and nxt in visit:
                        _add_to_buffer(buffers, held, nxt, nr, grad)
                _mark_held(held, edges, input_grads, grads, _BY_USER)
        for nxt, _ in edges:
            if nxt is not None:
                left = deps[nxt] - 1
                deps[nxt] = left
                if not left and nxt in visit:
                    ready.append(nxt)


def _run_accumulate(node, grads, owned, hooked=False):
    """A leaf's AccumulateGrad: tensor hooks (unless ``hooked`` already), the node's pre-hooks,
    the accumulation into ``.grad`` with the post-accumulate-grad hooks, then the node's
    post-hooks, in torch's order. ``owned``: whether the engine alone holds the gradient."""
    if not hooked:
        grads = _call_tensor_hooks(node, grads)
    if node._pre_hooks:
        for hook in list(node._pre_hooks.values()):
            new = hook(tuple(grads))
            if new is not None:
                grads = list(new)
    grad = grads[0]
    if grad is not None:
        seen = (node._pre_hooks or node._post_hooks or node._tensor_pre_hooks
                or node.variable._leaf_hooks)
        data = grad._data
        _accumulate(node, grad, owned and not seen and data.size > SMALL_GRAD_ELEMENTS and _whole(data))
    if node._post_hooks:
        for hook in list(node._post_hooks.values()):
            hook((), tuple(grads))


def _accumulate(node, grad, owned):
    """``.grad += grad``; an ``owned`` first gradient is stored without a copy."""
    variable = node.variable
    accumulate_into(variable, grad, owned)
    if variable._post_accumulate_hooks:
        for hook in list(variable._post_accumulate_hooks.values()):
            hook(variable)


# The engine's own accumulation into ``.grad``: the compiled loop adds a leaf's gradient itself
# only while these are the module's (the profiler and tests patch them to watch each one).
_OWN_ACCUMULATION = {"_accumulate": _accumulate, "accumulate_into": accumulate_into}


class _Summed(list):
    """A node's buffer holding the sum the engine made of the gradients for its one output:
    no one else sees that sum before the node runs, so further gradients are added into it."""
    __slots__ = ()


def _add_to_buffer(buffers, held, node, nr, grad):
    """Put ``grad``, a gradient for output ``nr`` of ``node``, in its buffer, adding it to the
    one there."""
    grads = buffers.get(node)
    if grads is None:
        if nr == 0:
            buffers[node] = [grad]
            return
        grads = buffers[node] = [None] * (nr + 1)
    elif len(grads) <= nr:
        grads.extend([None] * (nr + 1 - len(grads)))
    old = grads[nr]
    if old is None:
        grads[nr] = grad
    elif len(grads) == 1:
        if grads.__class__ is _Summed:
            _add_in_place(old, grad)
            return
        total = _sum(old, grad)
        held.pop(node, None)  # the sum is the engine's
        if (total.__class__ is not _tensor.BlockedTensor and total._data.base is None
                and not state.grad_enabled and not forward.active):
            buffers[node] = _Summed((total,))
        else:
            grads[0] = total
    else:
        grads[nr] = _sum(old, grad)


def _add_in_place(total, grad):
    a, b = total._data, grad._data
    if a.dtype == b.dtype and a.shape == b.shape:
        a += b
    else:
        total._data = a + b


def _sum(old, grad):
    """Two gradients for one node output, added: on the arrays when no graph of the backward is
    being built, no tangents ride on them, and they match (what ``old + grad`` computes, without
    an op's dispatch). Two gradients held in one oneDNN layout are added over their buffers."""
    if ((old.__class__ is _tensor.BlockedTensor or grad.__class__ is _tensor.BlockedTensor)
            and not state.grad_enabled and not forward.active):
        (a, b), layout_of = _tensor.elementwise_operands(old, grad)
        if layout_of is not None:
            return _tensor.wrap_like(layout_of, _add_arrays(a, b))
    a, b = old._data, grad._data
    if not state.grad_enabled and not forward.active and a.dtype == b.dtype and a.shape == b.shape:
        return _tensor._make(_add_arrays(a, b))
    return old + grad


def _add_arrays(a, b):
    """``a + b``: large arrays on the threads the ops' additions use."""
    if a.nbytes < _BINARY_MIN_BYTES:
        return a + b
    from ..ops.pointwise import large_binary
    return large_binary(_np_add, a, b)


def _call_tensor_hooks(node, grads):
    """Hooks registered with ``Tensor.register_hook`` (then ``retain_grad``'s) on the
    gradients of the node's outputs."""
    hooks = node._tensor_pre_hooks
    if hooks is None and node.__class__ is AccumulateGrad:
        leaf_hooks = node.variable._leaf_hooks
        hooks = {0: leaf_hooks} if leaf_hooks else None
    if hooks:
        for nr, fns in hooks.items():
            if nr < len(grads) and grads[nr] is not None:
                for fn in list(fns.values()):
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
        for hook in list(node._pre_hooks.values()):
            new = hook(tuple(grads))
            if new is not None:
                grads = list(new)
    if not retain_graph:
        _running.released = node
    try:
        if anomaly.enabled:
            input_grads = checked_backward(node, grads)
        else:
            fast = node.backward_arrays
            if (fast is None or state.grad_enabled or forward.active
                    or (input_grads := fast(*grads)) is None):
                input_grads = node.backward(*grads)
    finally:
        _running.released = None
    if node._post_hooks:
        for hook in list(node._post_hooks.values()):
            new = hook(tuple(input_grads), tuple(grads))
            if new is not None:
                input_grads = new
    if not retain_graph:
        node.release()
    if input_grads.__class__ is not tuple:
        input_grads = _as_tuple(input_grads)
    return input_grads


def _as_tuple(grads):
    """A node's result as a tuple: a lone gradient (or None) is the gradient of its one input."""
    if grads is None or hasattr(grads, "_data"):
        return (grads,)
    return tuple(grads)
