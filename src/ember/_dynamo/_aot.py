"""Ahead-of-time backward for ``ember.compile`` (what torch's AOTAutograd does).

At capture time, the call recorded for the forward graph also left its autograd graph behind
(the capture runs the function for real, with grad mode on). ``build`` walks that autograd
graph as the engine would, under a second ``Recorder`` whose placeholders are the nodes' saved
tensors and the gradients of the outputs: a node with an array backward (``backward_arrays``,
what the engine runs: GEMMs, oneDNN's GELU backward, the fused layer-norm backward) is recorded
as one ``run_node_arrays`` call on its saved values, the other nodes' ``backward`` (written in
ember ops) op by op; the recorded calls are the backward graph. Each saved tensor is a value of
the forward graph (an input, a parameter, an intermediate result), which the forward graph then
also returns. The forward graph takes the root's parameters and buffers as arguments.

At run time ``AotFunction`` runs the forward graph with grad mode off and records ONE node,
``CompiledFunctionBackward``, over the inputs and parameters that require grad; its backward
runs the backward graph on the saved values. ``create_graph=True`` recomputes the forward with
autograd recording and differentiates that (the backward graph is not itself differentiated).

Whatever the walk cannot express raises ``NoAot`` with the reason, and the compiled function
replays its forward graph with eager autograd instead.
"""
import operator
import sys
import types
import warnings

from .. import Tensor
from ..autograd._dual import forward as _forward
from ..autograd.graph import AccumulateGrad, Node, _Packed, edge_of
from ..autograd.grad_mode import state
from ..fx.graph import Graph
from ..fx.graph_module import GraphModule
from ..fx.node import Node as FxNode
from ..fx.node import map_arg
from ..jit._recorder import Recorder, TracerWarning, _run_unrecorded
from ..jit._trace import _graph_module
from ..nn import Module
from ..ops._common import record
from ._guards import StateGuard

__all__ = ["NoAot", "build", "record_inside_ember", "AotFunction", "CompiledFunctionBackward", "flat_tensors"]

_BACKWARD_ROOT = Module()   # the backward graph fetches no parameters
_FROZEN_WARNINGS = ("Converting a tensor to", "Iterating over a tensor", "Printing a tensor")


class NoAot(Exception):
    """Why a captured graph gets no ahead-of-time backward."""


def flat_tensors(value, out=None):
    """The tensors of a (nested) tuple, list or dict, in order."""
    out = [] if out is None else out
    if isinstance(value, Tensor):
        out.append(value)
    elif isinstance(value, (tuple, list)):
        for item in value:
            flat_tensors(item, out)
    elif type(value) is dict:
        for item in value.values():
            flat_tensors(item, out)
    return out


def _memory(tensor):
    memory = tensor._data
    while getattr(memory, "base", None) is not None:
        memory = memory.base
    return memory


class CompiledFunctionBackward(Node):
    """The one node a compiled region records: its backward runs the region's backward graph."""

    __slots__ = ()

    def backward(self, *grads):
        """With a graph of the backward being built (``create_graph=True``): the forward again
        with autograd recording, differentiated."""
        _check = self.saved_tensors     # raises if freed, or modified in place since
        compiled = self.compiled
        grads = tuple(grads) + (None,) * (len(compiled.out_meta) - len(grads))
        return compiled.differentiable_backward(self, grads)

    def backward_arrays(self, *grads):
        """The backward graph on the saved values (what the engine runs without
        ``create_graph``)."""
        _check = self.saved_tensors
        compiled = self.compiled
        grads = tuple(grads) + (None,) * (len(compiled.out_meta) - len(grads))
        tangents = [g if g is not None else _zeros(meta) for g, meta in
                    zip(grads, compiled.out_meta)]
        return tuple(compiled.backward_graph(*self.saved_values, *tangents))

    def release(self):
        self._saved = None
        self.args = self.saved_values = None


def _zeros(meta):
    import ember
    shape, dtype, device = meta
    return ember.zeros(shape, dtype=dtype, device=device)


class AotFunction:
    """The callable of a compiled graph with an ahead-of-time backward: ``replay`` is the
    forward graph alone (used when grad mode is off, and for ``create_graph``)."""

    aot = True

    def __init__(self, replay, forward_graph, backward_graph, diff_args, leaves, diff_outs,
                 out_meta, nondeterministic, mutated_buffers, lifted=()):
        self.replay = replay
        self.forward_graph = forward_graph
        self.backward_graph = backward_graph
        self.diff_args = diff_args          # positions of the inputs whose gradients it returns
        self.leaves = leaves                # parameters (and other leaves) it returns gradients of
        self.diff_outs = diff_outs          # positions, among the output tensors, with gradients
        self.out_meta = out_meta            # (shape, dtype, device) of each of those
        self.nondeterministic = nondeterministic
        self.mutated_buffers = mutated_buffers
        self.lifted = lifted                # the root's tensors the forward graph takes last

    def __call__(self, *args):
        if not state.grad_enabled or _forward.active:
            # (under forward AD the forward graph's ops, run one by one, carry the tangents)
            return self.replay(*args)
        rng = None
        if self.nondeterministic:
            from ..ops.random import get_rng_state
            rng = get_rng_state()
        state.grad_enabled = False
        try:
            out, saved = self.forward_graph(*args, *self.lifted)
        finally:
            state.grad_enabled = True
        flat = flat_tensors(out)
        inputs = [args[i] for i in self.diff_args] + self.leaves
        node = record(CompiledFunctionBackward, inputs, *[flat[i] for i in self.diff_outs])
        if node is not None:
            node.compiled = self
            node.args = args
            node.rng = rng
            node.saved_values = saved
            node.save(*[t for t in saved if isinstance(t, Tensor)])
        return out

    def differentiable_backward(self, node, grads):
        """``create_graph=True``: the forward again with autograd recording (same random
        numbers, buffers put back), differentiated by the engine."""
        import ember
        from ..ops.random import get_rng_state, set_rng_state
        args = node.args
        snapshots = [b.detach().clone() for b in self.mutated_buffers]
        current = None
        if node.rng is not None:
            current = get_rng_state()
            set_rng_state(node.rng)
        create_graph = ember.is_grad_enabled()   # False under anomaly detection's check
        try:
            with ember.enable_grad():
                out = self.replay(*args)
        finally:
            if current is not None:
                set_rng_state(current)
            with ember.no_grad():
                for buffer, snapshot in zip(self.mutated_buffers, snapshots):
                    buffer.copy_(snapshot)
        flat = flat_tensors(out)
        outs, given = [], []
        for pos, grad in zip(self.diff_outs, grads):
            if grad is not None and flat[pos].requires_grad:
                outs.append(flat[pos])
                given.append(grad)
        inputs = [args[i] for i in self.diff_args] + self.leaves
        wanted = [i for i, t in enumerate(inputs) if t.requires_grad]
        result = [None] * len(inputs)
        if outs and wanted:
            with ember.enable_grad():
                found = ember.autograd.grad(outs, [inputs[i] for i in wanted], given,
                                            create_graph=create_graph, allow_unused=True)
            for i, g in zip(wanted, found):
                result[i] = g
        return tuple(result)


def build(cap, replay, args, result, versions_before):
    """The ``AotFunction`` of a capture (``cap.recorder`` kept), or raise ``NoAot``."""
    rec = cap.recorder
    root = cap.root
    for n in rec.graph.nodes:
        if n.op == "call_module":
            raise NoAot(f"the graph calls the submodule {n.target!r} as one opaque call")
    diff_args, terminals = [], {}
    for i, a in enumerate(args):
        if isinstance(a, Tensor):
            if a.requires_grad:
                terminals.setdefault(edge_of(a), []).append(len(diff_args))
                diff_args.append(i)
        elif flat_tensors(a) and any(t.requires_grad for t in flat_tensors(a)):
            raise NoAot("an input that requires grad is inside a container")
    changed = [t for t, v in versions_before if t._version_counter[0] != v]
    owned = {id(t) for t in list(root.parameters()) + list(root.buffers())}
    if any(id(t) not in owned for t in changed):
        raise NoAot("the function modifies an input in place")
    mutated_buffers = [t for t in changed if not t.requires_grad]
    if len(mutated_buffers) != len(changed):
        raise NoAot("the function modifies a parameter in place")
    flat = flat_tensors(result)
    diff_outs = [i for i, t in enumerate(flat) if t.grad_fn is not None]
    if not diff_outs:
        raise NoAot("no output has a gradient")
    inputs_memory = {id(_memory(a)) for a in flat_tensors(args)} | {
        id(_memory(t)) for t in owned_tensors(root)}
    seen = set()
    for t in flat:
        if id(t) in seen or id(_memory(t)) in inputs_memory:
            raise NoAot("an output is an input, a view of one, or returned twice")
        seen.add(id(t))
    nodes, order = _walk([flat[i] for i in diff_outs], terminals)
    saved_values, harvests, locate = _saved_values(rec, nodes)
    _choose_recomputed(rec, saved_values, flat)
    backward_graph, leaves = _trace_backward(nodes, order, flat, diff_outs, terminals,
                                             len(diff_args), saved_values, harvests, locate)
    forward_graph, lifted = _forward_graph(cap, rec, saved_values, harvests)
    out_meta = [(tuple(flat[i].shape), flat[i].dtype, flat[i].device) for i in diff_outs]
    return AotFunction(replay, forward_graph, backward_graph, diff_args, leaves, diff_outs,
                       out_meta, bool(cap.graph_module.meta.get("nondeterministic")),
                       mutated_buffers, lifted)


def record_inside_ember(rec, private_ops=False):
    """Record, too, the ember functions that ember's own modules call by name (a backward
    formula's ``where``, a layer's helper calling ``linear``), for the trace in progress.
    ``private_ops``: also the private functions of ``ember.ops`` and ``ember.nn.functional``
    (the ops that backward formulas call, such as a pooling's scatter)."""
    from ..fx._patching import namespace_of
    from ..jit._recorder import _recording_function
    for name, mod in list(sys.modules.items()):
        if not name.startswith("ember.") or not isinstance(mod, types.ModuleType):
            continue
        rec.patch_globals(mod.__dict__)
        if private_ops and name.startswith(("ember.ops.", "ember.nn.functional.")):
            d = mod.__dict__
            for key, value in list(d.items()):
                if key.startswith("_") and not key.startswith("__") and \
                        isinstance(value, types.FunctionType) and value.__module__ == name:
                    rec._patcher.patch(d, key, _private_op(
                        value, _recording_function(value, namespace_of(value))))


def _private_op(fn, recording):
    """A private function of ember's ops, recorded as one call where the generated code can
    write its arguments, else run so that the ops inside it are recorded."""
    def wrapper(*args, **kwargs):
        if all(_writable(a) for a in (*args, *kwargs.values())):
            return recording(*args, **kwargs)
        return fn(*args, **kwargs)
    wrapper.__fx_original__ = fn
    return wrapper


def _writable(a):
    return isinstance(a, Tensor) or _replayable(a)


def owned_tensors(root):
    return list(root.parameters()) + list(root.buffers())


def _walk(outputs, terminals):
    """The nodes of the region (from the outputs' nodes down to the inputs' edges and the
    leaves' accumulators), and how many edges inside the region lead into each."""
    deps = {}
    stack = []
    for t in outputs:
        node, _ = edge_of(t)
        if node not in deps:
            deps[node] = 0
            stack.append(node)
    while stack:
        node = stack.pop()
        if _is_boundary(node, terminals):
            continue
        if node._has_hooks:
            raise NoAot(f"{node.name()} has hooks or runs user code")
        if node._saved is None:
            raise NoAot(f"{node.name()}'s saved tensors were freed")
        if node._saved.__class__ is _Packed:
            raise NoAot("saved tensors hooks are active")
        for nxt, _ in node.next_functions:
            if nxt is None:
                continue
            if nxt in deps:
                deps[nxt] += 1
            else:
                deps[nxt] = 1
                stack.append(nxt)
    return deps, [n for n in deps if not deps[n]]


def _is_boundary(node, terminals):
    return node.__class__ is AccumulateGrad or any(node is n for n, _ in terminals)


class _Saved:
    """One value the backward graph takes: a value of the forward graph (``value``), or a
    tensor an op made inside and saved (``harvest``: (the forward graph's node of that call,
    the index among its node's saved tensors))."""

    def __init__(self, value, harvest=None):
        self.value = value
        self.harvest = harvest
        self.aliases = []      # the saved tensors that are this value
        self.views = []        # the saved tensors that are views of its memory
        self.recompute = None  # (the forward graph's pointwise call, its input's _Saved)


def _saved_values(rec, nodes):
    """The ``_Saved`` values of the tensors the region's nodes saved; the harvests (forward
    graph node -> (index of its result that has the node, [(path, saved index)])); and
    ``locate(node)``: (the forward graph's call that made ``node``, which of its results has
    it, the path of edges from that result's node to it)."""
    by_data, by_memory, by_grad_fn = {}, {}, {}
    for entry in rec._values.values():
        t = entry[0]
        if isinstance(t, Tensor):
            by_data.setdefault(id(t._data), t)
            if getattr(t._data, "base", None) is None:
                by_memory[id(t._data)] = t      # the memory's owner first
            else:
                by_memory.setdefault(id(_memory(t)), t)
            if t.grad_fn is not None:
                by_grad_fn.setdefault(t.grad_fn, t)
    for t, _ in rec.producers.values():
        if t.grad_fn is not None:
            by_grad_fn[t.grad_fn] = t
    values, harvests = {}, {}
    inside = []

    def locate(node):
        if not inside:
            inside.append(_nodes_inside_calls(by_grad_fn))
        if node not in inside[0]:
            raise NoAot(f"{node.name()} was made inside a call that is not in the forward "
                        f"graph")
        produced, path = inside[0][node]
        call, pick = _call_of(rec, produced)
        return call, pick, path

    for node in nodes:
        if node.__class__ is AccumulateGrad:
            continue
        for k, t in enumerate(node._saved or ()):
            if t is None:
                continue
            value = t if rec.is_traced(t) else by_data.get(id(t._data))
            if value is not None and value.shape == t.shape and value.dtype == t.dtype and \
                    value.stride() == t.stride():
                values.setdefault(id(value), _Saved(value)).aliases.append(t)
                continue
            value = by_memory.get(id(_memory(t)))
            if value is not None and value.dtype == t.dtype:
                values.setdefault(id(value), _Saved(value)).views.append(t)
                continue
            call, pick, path = locate(node)
            harvests.setdefault(call, (pick, []))[1].append((path, k))
            saved = values.setdefault(id(t), _Saved(t, (call, (path, k))))
            saved.aliases.append(t)
    return list(values.values()), harvests, locate


# pointwise calls whose saved results the backward graph recomputes from their saved input:
# one cheap pass each (transcendental functions, such as GELU's erf, cost more to recompute
# than their results cost to keep, as eager keeps them)
_RECOMPUTED = frozenset("""
    relu neg abs leaky_relu square hardtanh relu6 mul add sub truediv div
""".split())


def _choose_recomputed(rec, saved_values, outputs):
    """Mark the saved values that the backward graph recomputes instead of the forward graph
    saving them: results of a pointwise call of one tensor (and scalars) whose input is saved
    anyway, or is an input or a parameter (alive anyway), and that are not outputs."""
    by_id = {id(s.value): s for s in saved_values if s.harvest is None}
    tensor_of = {}
    for entry in rec._values.values():
        if entry[1] is not None:
            tensor_of[entry[1]] = entry[0]
    for t, n in rec.producers.values():
        tensor_of[n] = t
    output_ids = {id(t) for t in outputs}
    for saved in list(by_id.values()):
        value = saved.value
        produced = rec.producers.get(id(value))
        if produced is None or produced[0] is not value or id(value) in output_ids:
            continue
        call = produced[1]
        name = getattr(call.target, "__name__", call.target)
        if call.op not in ("call_function", "call_method") or name not in _RECOMPUTED:
            continue
        inputs = [a for a in (*call.args, *call.kwargs.values()) if isinstance(a, FxNode)]
        if len(inputs) != 1 or any(isinstance(a, (tuple, list, dict)) for a in call.args):
            continue
        source_value = tensor_of.get(inputs[0])
        if not isinstance(source_value, Tensor) or source_value is value:
            continue
        source = by_id.get(id(source_value))
        if source is None:
            if inputs[0].op not in ("placeholder", "get_attr"):
                continue
            source = _Saved(source_value)
            by_id[id(source_value)] = source
            saved_values.append(source)
        if source.recompute is None:
            saved.recompute = (call, source)


def _in_forward_order(saved_values):
    """The recomputed saved values, in the order of their calls in the forward graph."""
    recomputed = [v for v in saved_values if v.recompute is not None]
    if not recomputed:
        return []
    order = {n: i for i, n in enumerate(recomputed[0].recompute[0].graph.nodes)}
    return sorted(recomputed, key=lambda v: order[v.recompute[0]])


def _nodes_inside_calls(by_grad_fn):
    """node -> (the forward graph's value whose call made it, the path of edge indexes from
    that value's node to it), for the nodes that one recorded call made (an op applied
    inside a layer's function, such as the ``addmm`` inside ``linear``)."""
    inside = {}
    for fn, value in by_grad_fn.items():
        stack = [(fn, ())]
        while stack:
            node, path = stack.pop()
            if node in inside:
                continue
            inside[node] = (value, path)
            for i, (nxt, _) in enumerate(node.next_functions):
                if nxt is not None and nxt not in by_grad_fn and \
                        nxt.__class__ is not AccumulateGrad:
                    stack.append((nxt, path + (i,)))
    return inside


def _call_of(rec, value):
    """(the forward graph's node of the call that made ``value``, which of its results
    ``value`` is, or None when it is the whole result)."""
    graph = rec.graph
    produced = rec.producers.get(id(value))
    if produced is not None and produced[0] is value:
        node = produced[1]
    else:
        output = next(n for n in graph.nodes if n.op == "output")
        with graph.inserting_before(output):
            node = rec.node_of(value)
    if node.op == "call_function" and node.target is operator.getitem and \
            isinstance(node.args[0], FxNode):
        node, pick = node.args[0], node.args[1]
    else:
        pick = None
    if node.op not in ("call_function", "call_method"):
        raise NoAot(f"a tensor saved inside {node.op} {node.target} cannot be taken out")
    return node, pick


def grad_leaf(tensor):
    """A leaf that requires grad over ``tensor``'s data: an argument of ``run_harvesting``
    that required grad at capture time."""
    return tensor.detach().requires_grad_()


def run_harvesting(target, pick, indexes, *args, **kwargs):
    """Run one call of the forward graph with autograd recording (its arguments that required
    grad at capture time are ``grad_leaf``s), and return its result (detached) followed by
    what its nodes saved at ``indexes`` ((path of edges to the node, index of the saved
    tensor, or None for the node itself)): values made inside an op (max-pool indices,
    normalization statistics), or the node whose backward the backward graph calls."""
    prev = state.grad_enabled
    state.grad_enabled = True
    try:
        result = target(*args, **kwargs) if callable(target) else \
            getattr(args[0], target)(*args[1:], **kwargs)
    finally:
        state.grad_enabled = prev
    top = (result if pick is None else result[pick]).grad_fn
    saved = []
    for path, k in indexes:
        node = top
        for i in path:
            node = node.next_functions[i][0]
        saved.append(node if k is None else node._saved[k])
    if isinstance(result, Tensor):
        result = result.detach()
    elif isinstance(result, (tuple, list)):
        result = type(result)(r.detach() if isinstance(r, Tensor) else r for r in result)
    return (result, *saved)


def _trace_backward(deps, ready, flat, diff_outs, terminals, n_args, saved_values, harvests,
                    locate):
    """Run the region's backward formulas under a Recorder: the backward GraphModule, and the
    leaves whose gradients it returns after the inputs'. A node whose formula the recorder
    cannot follow (it computes on arrays) becomes one call of the backward graph,
    ``run_node_backward``, on the node the forward graph's run of its call made (harvested)."""
    import ember
    from ._capture import _ALWAYS_RECORDED
    rec = Recorder(_BACKWARD_ROOT)
    rec.always_recorded = frozenset(getattr(ember, n) for n in _ALWAYS_RECORDED
                                    if hasattr(ember, n))
    boundary_grads = {}
    leaves = []
    outputs_of = {}
    for (node, nr), positions in terminals.items():
        for p in positions:
            outputs_of[(id(node), nr)] = p
    prev = state.grad_enabled
    state.grad_enabled = True
    saved_outputs = {}
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", TracerWarning)
            with rec.active():
                record_inside_ember(rec, private_ops=True)
                for i, saved in enumerate(saved_values):
                    if saved.recompute is None:
                        ph = rec.placeholder(f"saved_{i}", saved.value)
                        for t in saved.aliases:
                            rec.bind(t, ph)
                for saved in _in_forward_order(saved_values):
                    if saved.recompute is not None:
                        call, source = saved.recompute
                        args = map_arg(call.args, lambda n, v=source.value: v)
                        kwargs = map_arg(call.kwargs, lambda n, v=source.value: v)
                        node = rec.record(call.op, call.target, args, kwargs, saved.value)
                        for t in saved.aliases:
                            rec.bind(t, node)
                for saved in list(saved_values):
                    for t in saved.views:
                        rec.record(*_view_call(saved.value, t), {}, t)
                buffers = {}
                first_tangent = None
                for k, pos in enumerate(diff_outs):
                    out = flat[pos]
                    tangent = ember.ones_like(out).requires_grad_(out.is_floating_point())
                    ph = rec.placeholder(f"tangents_{k}", tangent)
                    first_tangent = first_tangent or ph
                    node, nr = edge_of(out)
                    _add(buffers, node, nr, tangent)
                for node in deps:
                    if "_saved_outputs" in node.__dict__:
                        saved_outputs[node] = node.__dict__["_saved_outputs"]
                        node._saved_outputs = ()
                while ready:
                    node = ready.pop()
                    grads = buffers.pop(node, None)
                    if _is_boundary(node, terminals):
                        _collect(node, grads, terminals, outputs_of, boundary_grads, leaves,
                                 n_args)
                        continue
                    if grads is not None:
                        result = _array_call(rec, node, grads)
                        if result is None:
                            result = _traced_formula(rec, node, grads)
                        if result is None:
                            result = _opaque_call(rec, node, grads, first_tangent, saved_values,
                                                  harvests, locate)
                        if result is None or isinstance(result, Tensor):
                            result = (result,)
                        for (nxt, nr), g in zip(node.next_functions, result):
                            if nxt is not None and g is not None:
                                _add(buffers, nxt, nr, g)
                    for nxt, _ in node.next_functions:
                        if nxt is not None:
                            deps[nxt] -= 1
                            if not deps[nxt]:
                                ready.append(nxt)
                outs = [boundary_grads.get(i) for i in range(n_args + len(leaves))]
                rec.graph.output(rec.create_arg(tuple(outs)))
    finally:
        state.grad_enabled = prev
        for node, value in saved_outputs.items():
            node._saved_outputs = value
    for w in caught:
        if issubclass(w.category, TracerWarning) and str(w.message).startswith(_FROZEN_WARNINGS):
            raise NoAot(f"a backward formula uses a tensor's value in Python: {w.message}")
    for qual, t in rec.constants.items():
        made_by = f" ({t.grad_fn.name()})" if t.grad_fn is not None else ""
        raise NoAot(f"a backward formula computes a tensor ({qual}{made_by}) by a call the "
                    f"recorder cannot follow: it would be a constant of the backward graph")
    try:
        gm = _graph_module(GraphModule, _BACKWARD_ROOT, rec, "CompiledFunctionBackward")
    except Exception as e:
        raise NoAot(f"the backward graph cannot be built: {type(e).__name__}: {e}") from e
    return gm, leaves


# what a node keeps for the engine and for hooks, not for its formula
_NODE_STATE = frozenset(vars(Node)) | {"_metadata"}
_LITERALS = (type(None), bool, int, float, complex, str)


def _array_call(rec, node, grads):
    """Record ``run_node_arrays``: the node's ``backward_arrays`` (the array kernel eager's
    engine runs: oneDNN's GELU backward, the fused softmax and layer-norm backward, one GEMM
    per input of a linear) on the values it saved, as one call of the backward graph. None
    (nothing recorded) where the node has no ``backward_arrays``, keeps state other than
    literals (arrays, functions: state of one run), or saved a tensor the backward graph
    does not hold."""
    cls = node.__class__
    if cls.backward_arrays is None or not _importable(cls):
        return None
    state_ = _node_state(node)
    if state_ is None:
        return None
    saved = tuple(node._saved)
    if not all(t is None or rec.is_traced(t) for t in saved) or \
            not all(g is None or rec.is_traced(g) for g in grads):
        return None
    nrs = tuple(None if fn is None else nr for fn, nr in node.next_functions)
    args = (cls, state_, nrs, saved, *grads)
    result = _run_unrecorded(rec, run_node_arrays, args, {})
    rec.record("call_function", run_node_arrays, args, {}, result)
    return result


def _importable(cls):
    """Whether generated code can name ``cls`` (its qualified name leads back to it)."""
    from ..fx._names import qualified_name
    try:
        path = qualified_name(cls).split(".")
    except RuntimeError:
        return False
    target = sys.modules.get(path[0])
    for part in path[1:]:
        target = getattr(target, part, None)
    return target is cls


_slotted = {}


def _own_slots(cls):
    """Whether a node class declares slots of its own (set one by one, not in __dict__)."""
    found = _slotted.get(cls)
    if found is None:
        found = _slotted[cls] = any(
            klass.__dict__.get("__slots__") for klass in cls.__mro__[:cls.__mro__.index(Node)])
    return found


def _node_state(node):
    """The attributes a node's formula reads (its ``__dict__`` and slots, less the engine's
    state) as a dict of literals, or None where one is not a literal."""
    found = {}
    for key, value in node.__dict__.items():
        if key not in _NODE_STATE:
            found[key] = value
    for klass in node.__class__.__mro__:
        if klass is Node:
            break
        slots = klass.__dict__.get("__slots__", ())
        for key in (slots,) if isinstance(slots, str) else slots:
            if key not in ("__dict__", "__weakref__") and hasattr(node, key):
                found[key] = getattr(node, key)
    return found if all(_literal(v) for v in found.values()) else None


def _literal(value):
    from .. import device, dtype
    if isinstance(value, (tuple, list)):
        return all(_literal(v) for v in value)
    if isinstance(value, dict):
        return all(_literal(v) for v in value.values())
    return value.__class__ in _LITERALS or isinstance(value, (dtype, device))


class _Elsewhere:
    """The node an edge of ``run_node_arrays``'s node leads to: the formulas only ask whether
    an input needs a gradient (an edge's node is not None)."""

    __slots__ = ()


_ELSEWHERE = _Elsewhere()
_edges = {}


def _edges_of(nrs):
    edges = _edges.get(nrs)
    if edges is None:
        edges = _edges[nrs] = tuple((None, 0) if nr is None else (_ELSEWHERE, nr) for nr in nrs)
    return edges


def run_node_arrays(cls, state_, nrs, saved, *grads):
    """A node of class ``cls`` with ``state_`` and the ``saved`` tensors, its backward run as
    the engine runs it: ``backward_arrays`` on the arrays, or ``backward`` where that declines
    (or a graph of the backward is being built)."""
    node = cls.__new__(cls)
    if state_:
        if _own_slots(cls):
            for key, value in state_.items():
                setattr(node, key, value)
        else:
            node.__dict__.update(state_)
    node.next_functions = _edges_of(nrs)
    node._saved = saved
    node._versions = [None if t is None else t._version_counter[0] for t in saved]
    result = None if state.grad_enabled else node.backward_arrays(*grads)
    if result is None:
        result = node.backward(*grads)
    if result is None or isinstance(result, Tensor):
        result = (result,)
    return tuple(result)


def _view_call(value, view):
    """(op, target, args) of a call that makes ``view`` from ``value`` (the tensor whose
    memory it views): the transpose of a matrix (a linear layer's saved ``weight.t()``) or a
    view of a contiguous tensor as another shape, else ``as_strided``."""
    import ember
    if value.storage_offset() == view.storage_offset():
        shape, stride = tuple(view.shape), view.stride()
        if value.dim() == 2 and shape == tuple(value.shape)[::-1] and \
                stride == value.stride()[::-1]:
            return "call_method", "t", (value,)
        if value.is_contiguous() and view.is_contiguous() and view.numel() == value.numel():
            return "call_method", "view", (value, shape)
    return "call_function", ember.as_strided, (value, tuple(view.shape), view.stride(),
                                               view.storage_offset())


def _traced_formula(rec, node, grads):
    """``node.backward(*grads)`` recorded; None (and nothing recorded) where the formula
    computes a tensor by a call the recorder cannot follow."""
    last = rec.graph._root.prev
    known = set(rec.constants)
    bindings = {k: list(v) for k, v in rec._values.items()}
    try:
        result = node.backward(*grads)
        returned = flat_tensors(result)
        if len(rec.constants) == len(known) and _plain_args(rec.graph, last) and \
                all(rec.is_traced(g) for g in returned):
            return result
    except NoAot:
        raise
    except Exception:       # the formula did something the trace cannot (left to the node)
        pass
    while rec.graph._root.prev is not last:
        rec.graph.erase_node(rec.graph._root.prev)
    for qual in set(rec.constants) - known:
        del rec.constants[qual]
    rec._values.clear()
    rec._values.update(bindings)
    return None


def _plain_args(graph, last):
    """Whether the generated code can write every argument of the nodes after ``last`` (a
    private function of a formula may take an autograd node, an array, a helper object)."""
    n = last.next
    while n is not graph._root:
        if not all(_replayable(a) for a in (*n.args, *n.kwargs.values())):
            return False
        n = n.next
    return True


def _replayable(a):
    """Whether the generated code can write ``a``: nodes, literals, dtypes, devices,
    functions and classes, and containers of them."""
    from .. import device, dtype
    if isinstance(a, (tuple, list)):
        return all(_writable(x) for x in a)
    if isinstance(a, dict):
        return all(_writable(x) for x in a.values())
    if isinstance(a, slice):
        return all(_writable(x) for x in (a.start, a.stop, a.step))
    return a is None or a is Ellipsis or isinstance(a, (FxNode, bool, int, float, complex, str,
                                                         dtype, device, type,
                                                         types.FunctionType))


def _opaque_call(rec, node, grads, before, saved_values, harvests, locate):
    """Record ``run_node_backward(node, *grads)``: the node is an input of the backward
    graph, taken from the forward graph's run of the call that made it."""
    call, pick, path = locate(node)
    harvests.setdefault(call, (pick, []))[1].append((path, None))
    with rec.graph.inserting_before(before):
        ph = rec.graph.create_node("placeholder", f"node_{len(saved_values)}")
    saved_values.append(_Saved(node, (call, (path, None))))
    result = _run_unrecorded(rec, run_node_backward, (node, *grads), {})
    fx = rec.graph.create_node("call_function", run_node_backward,
                               (ph, *rec.create_arg(tuple(grads))), {})
    rec.bind(result, fx)
    return result


def run_node_backward(node, *grads):
    """One node's backward, as the engine runs it."""
    fast = None if state.grad_enabled else node.backward_arrays
    result = fast(*grads) if fast is not None else None
    if result is None:
        result = node.backward(*grads)
    if result is None or isinstance(result, Tensor):
        result = (result,)
    return tuple(result)


def _add(buffers, node, nr, grad):
    grads = buffers.setdefault(node, [])
    if len(grads) <= nr:
        grads.extend([None] * (nr + 1 - len(grads)))
    grads[nr] = grad if grads[nr] is None else grads[nr] + grad


def _collect(node, grads, terminals, outputs_of, boundary_grads, leaves, n_args):
    if not grads:
        return
    for nr, g in enumerate(grads):
        if g is None:
            continue
        slot = outputs_of.get((id(node), nr))
        if slot is None:
            if node.__class__ is not AccumulateGrad:
                raise NoAot("a gradient leaves the region by an edge that is no input's")
            slot = n_args + len(leaves)
            outputs_of[(id(node), nr)] = slot
            leaves.append(node.variable)
        old = boundary_grads.get(slot)
        boundary_grads[slot] = g if old is None else old + g


def _leaf_maker(new, val_map, requires_grad):
    """Maps an argument node of a harvested call onto the new graph: a ``grad_leaf`` over it
    where its value required grad at capture time."""
    leaves = {}

    def arg(a):
        if not requires_grad.get(a, False):
            return val_map[a]
        if a not in leaves:
            leaves[a] = new.create_node("call_function", grad_leaf, (val_map[a],))
        return leaves[a]
    return arg


def _forward_graph(cap, rec, saved_values, harvests):
    """The capture's graph, returning ``(outputs, saved values)``; the calls in ``harvests``
    run through ``run_harvesting``."""
    graph = rec.graph
    output = next(n for n in graph.nodes if n.op == "output")
    before = set(graph.nodes)
    saved_values = [s for s in saved_values if s.recompute is None]
    with graph.inserting_before(output):
        value_nodes = [rec.node_of(s.value) if s.harvest is None else None
                       for s in saved_values]
    requires_grad = {}
    for entry in rec._values.values():
        if entry[1] is not None and isinstance(entry[0], Tensor):
            requires_grad[entry[1]] = entry[0].requires_grad
    for t, n in rec.producers.values():
        requires_grad[n] = t.requires_grad
    new = Graph()
    val_map, harvested = {}, {}
    guarded = {qual: tensor for _, _, tensor, qual in StateGuard(cap).attributes}
    lifted = []
    for n in graph.nodes:
        if n.op == "output":
            out_value = map_arg(n.args[0], val_map.__getitem__)
            break
        if n.op == "get_attr" and n.target in guarded:
            # a parameter or buffer: an argument after the inputs, not fetched through the
            # modules on every call (the guards check it is still the same tensor)
            val_map[n] = new.create_node("placeholder", n.name)
            lifted.append(guarded[n.target])
            continue
        if n not in harvests:
            val_map[n] = new.node_copy(n, val_map.__getitem__)
            continue
        pick, indexes = harvests[n]
        arg = _leaf_maker(new, val_map, requires_grad)
        call = new.create_node(
            "call_function", run_harvesting,
            (n.target, pick, tuple(indexes), *map_arg(n.args, arg)), map_arg(n.kwargs, arg))
        val_map[n] = new.create_node("call_function", operator.getitem, (call, 0))
        for j, k in enumerate(indexes):
            harvested[(n, k)] = new.create_node("call_function", operator.getitem, (call, j + 1))
    saved_nodes = [val_map[v] if v is not None else harvested[s.harvest]
                   for v, s in zip(value_nodes, saved_values)]
    new.output((out_value, tuple(saved_nodes)))
    for n in reversed(list(graph.nodes)):
        if n not in before and not n.users:
            graph.erase_node(n)
    shim = types.SimpleNamespace(constants=rec.constants, graph=new, nondeterministic=[])
    return _graph_module(GraphModule, cap.root, shim, "CompiledFunctionForward"), tuple(lifted)
