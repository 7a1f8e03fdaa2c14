"""Forward-mode automatic differentiation: where tangents live and how they move through ops.

A tensor's tangent at the current dual level is kept in its ``_fw_grad`` (a Tensor class
default of None, set in the instance ``__dict__``). It is either the tangent itself or a
``_PendingTangent``: the op that made the tensor recorded itself (``ops._common.record``) while a
dual level was active and one of its inputs had a tangent, and the output tangent is computed
from the node's ``jvp`` the first time it is needed.

Why later: an op calls ``node = record(...)`` and only then sets the node's attributes
(``node.dim = ...``, ``node.save(...)``), so the rule cannot run inside ``record``. The pending
tangent is computed

* when it is read: by the next op that takes the tensor as an input (its ``record``), by
  ``unpack_dual``, by an in-place op on the tensor;
* before anything writes into the memory of one of the node's inputs or outputs
  (``before_write``, called by the in-place ops before they write), so that the rule sees the
  values the op saw. A node whose inputs changed all the same (a write that did not announce
  itself) refuses to compute a tangent, with an error, rather than give a wrong one;
* never, when the level is exited first: ``exit_dual_level`` drops every tangent.

Rules run with tangent propagation switched off (the rule's ops on primals carrying tangents
must not start tangents of their own) and with the grad mode the op ran under, so that a
tangent computed from tensors that require grad has a history for reverse mode.

With no level active, ``forward.active`` is False and ``record`` reads only that field.
"""
import re
import weakref

from .grad_mode import state as grad_state
from .graph import Node

__all__ = ["forward", "tangent_of", "set_tangent", "record_tangents", "before_write",
           "inplace_tangent", "no_forward", "jvp_by_backward", "jvp_by_operand_backward",
           "jvp_by_transposition"]


class _ForwardState:
    """Process-wide, as torch's dual levels are. ``active``: a level exists and tangents
    propagate (False while a JVP rule runs)."""

    def __init__(self):
        self.active = False
        self.level = None
        self.pending = []   # nodes whose output tangents are not computed yet
        self.duals = []     # weak references to the tensors given a tangent at this level


forward = _ForwardState()

_NO_EDGE = (None, 0)


class _TangentInput(Node):
    """Where the edge of an input with a tangent leads in a node made for its rule alone, so
    that formulas which test ``next_functions[i][0] is not None`` compute that input's part.
    Never run: such a node is no tensor's grad_fn."""
    __slots__ = ()

    def backward(self, *grads):
        raise RuntimeError("a forward-mode rule's edge was followed by backward")


_TANGENT_EDGE = (_TangentInput(()), 0)
_PRUNE_AT = 256


class _PendingTangent:
    __slots__ = ("node", "output_nr")

    def __init__(self, node, output_nr):
        self.node, self.output_nr = node, output_nr

    def compute(self):
        return _compute(self.node)[self.output_nr]


class _Record:
    """What a node's ``jvp`` needs: its inputs, their tangents, its outputs (aliases), the
    versions of all of them, and the grad mode the op ran under."""
    __slots__ = ("inputs", "tangents", "outputs", "versions", "grad_enabled", "recorded", "results")


def tangent_of(t):
    """``t``'s tangent at the current level (computed now if pending), or None."""
    g = t._fw_grad
    if g is None or g.__class__ is not _PendingTangent:
        return g
    g = g.compute()
    t._fw_grad = g
    return g


def set_tangent(t, tangent):
    """Give ``t`` a tangent (or a pending one) at the current level."""
    if t.__dict__.get("_fw_grad") is None:
        duals = forward.duals
        duals.append(weakref.ref(t))
        if len(duals) > _PRUNE_AT and len(duals) & (len(duals) - 1) == 0:
            duals[:] = [r for r in duals if r() is not None]
    t._fw_grad = tangent


class no_forward:
    """Within it tangents do not propagate (how rules run)."""

    def __enter__(self):
        self.prev = forward.active
        forward.active = False

    def __exit__(self, *exc):
        forward.active = self.prev


def _differentiable(t):
    return t._data.dtype.kind in "fcV" or t._data.dtype.name == "bfloat16"


def record_tangents(node_cls, inputs, outputs, node):
    """Called by ``record`` while a level is active: when an input has a tangent, arrange for
    the outputs' tangents (``node``, the node recorded for backward, or None: a node is made
    for the rule alone). Returns the node (the op sets its attributes on it) or None."""
    tangents = []
    found = False
    for t in inputs:
        tangent = None if t is None else tangent_of(t)
        tangents.append(tangent)
        if tangent is not None:
            found = True
    if not found:
        return node
    if node_cls.jvp is _node_jvp():
        raise NotImplementedError(not_supported_message(node_cls))
    recorded = node is not None
    if node is None:   # a node for the rule alone: edges mark the inputs with tangents
        node = node_cls.__new__(node_cls)
        node.next_functions = tuple(_NO_EDGE if t is None else _TANGENT_EDGE for t in tangents)
        node._saved = ()
    rec = _Record()
    rec.inputs = tuple(inputs)
    rec.tangents = tuple(tangents)
    rec.outputs = tuple(None if o is None else o._alias() for o in outputs)
    rec.versions = tuple(None if t is None or not _is_tensor(t) else t._version_counter[0]
                         for t in inputs)
    rec.grad_enabled = grad_state.grad_enabled
    rec.recorded = recorded
    rec.results = None
    node._fw_record = rec
    for nr, out in enumerate(outputs):
        if out is not None and _differentiable(out):
            set_tangent(out, _PendingTangent(node, nr))
    pending = forward.pending
    pending.append(node)
    if len(pending) > _PRUNE_AT and len(pending) & (len(pending) - 1) == 0:
        _flush(pending)
    return node


def _flush(nodes):
    """Compute the tangents of ``nodes`` now (and forget them as pending)."""
    for node in list(nodes):
        _compute(node)


def before_write(tensor):
    """Compute, before ``tensor``'s memory changes, every pending tangent whose rule reads
    that memory (through an input or an output of its node)."""
    pending = forward.pending
    if not pending:
        return
    counter = tensor._version_counter
    touching = [node for node in pending if _touches(node._fw_record, counter)]
    _flush(touching)


def _touches(rec, counter):
    for t in rec.inputs:
        if t is not None and _is_tensor(t) and t._version_counter is counter:
            return True
    for t in rec.outputs:
        if t is not None and t._version_counter is counter:
            return True
    return False


def _compute(node):
    rec = node._fw_record
    if rec.results is not None:
        return rec.results
    try:
        forward.pending.remove(node)
    except ValueError:
        pass
    for t, version in zip(rec.inputs, rec.versions):
        if version is not None and t._version_counter[0] != version:
            raise RuntimeError(
                f"forward AD: an input of {type(node).__name__} was modified in place before its "
                "output's tangent was computed, by a write forward AD was not told of")
    prev_active, prev_grad = forward.active, grad_state.grad_enabled
    forward.active = False
    grad_state.grad_enabled = rec.grad_enabled
    try:
        node.primals = rec.inputs
        outputs = rec.outputs
        if rec.recorded and rec.grad_enabled:
            outputs = tuple(None if o is None else o._alias_with_history(node, nr)
                            for nr, o in enumerate(outputs))
        node.results = outputs
        out = node.jvp(*rec.tangents)
        results = tuple(_fit(t, o) for t, o in zip(out if isinstance(out, (tuple, list)) else (out,),
                                                  rec.outputs))
    finally:
        forward.active, grad_state.grad_enabled = prev_active, prev_grad
        node.__dict__.pop("primals", None)
        node.__dict__.pop("results", None)
    rec.results = results
    rec.inputs = rec.tangents = rec.outputs = None
    return results


def _fit(tangent, out):
    """A rule's tangent in its output's shape and dtype (a rule may leave it broadcastable, or
    give None for a zero tangent)."""
    if out is None:
        return None
    if not _differentiable(out):
        return None
    if tangent is None:
        from .._tensor import _make
        from .._backend import namespace_of
        return _make(namespace_of(out._data).zeros(out._data.shape, out._data.dtype))
    if tangent._data.shape != out._data.shape:
        tangent = tangent.expand(out._data.shape)
    if tangent._data.dtype != out._data.dtype:
        tangent = tangent.to(out.dtype)
    return tangent


def inplace_tangent(self, result):
    """After ``self`` took ``result``'s values in place: ``self``'s tangent becomes
    ``result``'s, written into ``self``'s existing tangent (views of it see the change)."""
    new = tangent_of(result) if result._fw_grad is not None else None
    old = tangent_of(self) if self._fw_grad is not None else None
    if new is None and old is None:
        return
    if old is not None and old._data.shape == self._data.shape and _writable(old._data):
        from .._backend import namespace_of
        xp = namespace_of(old._data)
        if new is None:
            old._data[...] = 0
        else:
            xp.copyto(old._data, new._data, casting="unsafe")
        from .graph import bump_version
        bump_version(old)
        return
    if self._base is not None:
        view = _view_of_base_tangent(self)
        if view is None:
            raise NotImplementedError(
                "forward AD: an in-place op on a view whose base's tangent does not have the "
                "base's memory layout is not supported")
        from .._backend import namespace_of
        namespace_of(view._data).copyto(view._data, new._data, casting="unsafe")
        set_tangent(self, view)
        return
    set_tangent(self, new if new is not None else _fit(None, self))


def _view_of_base_tangent(view):
    """The part of ``view``'s base's tangent that ``view`` is of the base (the base gets a zero
    tangent first if it has none), as a view; None where the two layouts differ."""
    from .._tensor import _make, _make_view
    from .._backend import namespace_of
    base = view._base
    tangent = tangent_of(base)
    if tangent is None:
        tangent = _make(namespace_of(base._data).zeros_like(base._data))
        set_tangent(base, tangent)
    bd, td, vd = base._data, tangent._data, view._data
    if td.strides != bd.strides or td.dtype != bd.dtype or not hasattr(bd, "__array_interface__"):
        return None
    offset = vd.__array_interface__["data"][0] - bd.__array_interface__["data"][0]
    lib = namespace_of(td).lib
    start = td.reshape(-1) if td.flags.c_contiguous else None
    if start is None or offset % td.itemsize:
        return None
    return _make_view(lib.stride_tricks.as_strided(start[offset // td.itemsize:], vd.shape, vd.strides),
                      tangent)


def _writable(data):
    try:
        return data.flags.writeable and 0 not in data.strides
    except AttributeError:
        return True


def clear_level():
    """Drop every tangent and pending rule of the level being exited."""
    for ref in forward.duals:
        t = ref()
        if t is not None:
            t.__dict__.pop("_fw_grad", None)
    forward.duals = []
    for node in forward.pending:
        node.__dict__.pop("_fw_record", None)
    forward.pending = []


def op_name_of(node_cls):
    """torch's op name from its node's name: ``MulBackward0`` -> ``mul``."""
    name = re.sub(r"Backward\d*$", "", node_cls.__name__)
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def not_supported_message(node_cls):
    return (f"Trying to use forward AD with {op_name_of(node_cls)} that does not support it "
            "because it has not been implemented yet.")


def _node_jvp():
    return Node.jvp


def _is_tensor(t):
    from .._tensor import Tensor
    return isinstance(t, Tensor)


def jvp_by_backward(node, tangent):
    """The rule of a one-input node whose backward is linear and elementwise in the gradient
    (``grad * f'(x)``): the backward formula applied to the tangent."""
    return node.backward(tangent)[0]


def jvp_by_operand_backward(node, *tangents):
    """The rule of a node whose backward gives each input ``grad * d_i`` (elementwise, then
    reduced by ``node.reduce`` to the input's shape): the sum of each input's formula applied
    to its tangent, without the reduction."""
    shape = node.results[0]._data.shape
    edges = node.next_functions
    total = None
    node.reduce = _unreduced
    try:
        for i, t in enumerate(tangents):
            if t is None:
                continue
            node.next_functions = tuple((edges[j] if edges[j][0] is not None else _TANGENT_EDGE)
                                        if j == i else _NO_EDGE for j in range(len(tangents)))
            if t._data.shape != shape:
                t = t.expand(shape)
            g = node.backward(t)[i]
            if g is not None:
                total = g if total is None else total + g
    finally:
        node.next_functions = edges
        del node.reduce
    return total


def _unreduced(grad, which):
    return grad


def jvp_by_transposition(node, *tangents):
    """The rule of a node whose backward is written in ember ops: backward is the transpose
    of the op's Jacobian, a linear map of the output gradients ``g``; the gradient of
    ``sum_i <backward(g)_i, tangent_i>`` with respect to ``g`` is the Jacobian times the
    tangents. Exact for any such node (linear ops, products, reductions, decompositions); it
    costs a backward of the backward, so the common ops have direct rules instead."""
    from .._tensor import _make
    from .._backend import namespace_of
    from . import grad as autograd_grad
    results = node.results
    seeds = []
    for o in results:
        if o is None or not _differentiable(o):
            seeds.append(None)
            continue
        seeds.append(_make(namespace_of(o._data).zeros(o._data.shape, o._data.dtype), requires_grad=True))
    edges = node.next_functions
    node.next_functions = tuple(_TANGENT_EDGE if t is not None and e[0] is None else e
                                for e, t in zip(edges, tangents))
    create_graph = grad_state.grad_enabled
    grad_state.grad_enabled = True
    try:
        grads = node.backward(*seeds)
        if not isinstance(grads, (tuple, list)):
            grads = (grads,)
        pairs = [(g, t) for g, t in zip(grads, tangents)
                 if g is not None and t is not None and g._requires_grad]
        live = [s for s in seeds if s is not None]
        if not pairs:
            return tuple(None for _ in results) if len(results) > 1 else None
        outs = autograd_grad([g for g, _ in pairs], live,
                             [t if t._data.shape == g._data.shape else t.expand(g._data.shape)
                              for g, t in pairs],
                             create_graph=create_graph, allow_unused=True)
    finally:
        node.next_functions = edges
        grad_state.grad_enabled = create_graph
    it = iter(outs)
    res = tuple(None if s is None else next(it) for s in seeds)
    return res if len(results) > 1 else res[0]
