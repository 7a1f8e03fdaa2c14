"""The fusion pass: groups of a captured graph's pointwise calls become one ``FusedKernel``.

Walking the graph in order, a pointwise call joins the group of the calls it reads (merging
them) where that keeps the graph's order valid: the group runs where its last call stood, so no
call outside it may read one of its values before that point. A ``sum`` or ``mean`` of a group's
value ends the group (its value is the kernel's; nothing in the group reads it, and a group
holds reductions over one set of dimensions). A group is worth a kernel when it saves a pass
over memory (two calls or more) or holds a call that eager ember makes in several NumPy passes
(``_pointwise.COMPOSITE``); the others stay as they were (one activation alone keeps eager's
array kernel, oneDNN's where it applies). ``_lowerings.rewrite`` runs first."""
import operator

from ..fx.graph import Graph
from ..fx.graph_module import GraphModule
from ..fx.node import Node, map_arg
from ._kernel import FusedKernel, Ref
from ._lowerings import rewrite
from ._pointwise import COMPOSITE, describe, reduction

__all__ = ["fuse", "kernels_of"]

_PREFIX = "_fused_kernel_"


class _Group:
    def __init__(self):
        self.members = []
        self.reduction = None      # (dims, keepdim) of the group's reductions
        self.reduced = set()       # its reduction calls


def _valid(members, new, pos, reduced):
    """Whether ``members`` plus ``new`` may run as one kernel at ``new``'s place."""
    inside = set(members) | {new}
    for m in inside:
        for u in m.users:
            if u not in inside and pos[u] < pos[new]:
                return False
            if u in inside and m in reduced:
                return False
    return True


def _groups(graph):
    nodes = list(graph.nodes)
    pos = {n: i for i, n in enumerate(nodes)}
    group_of = {}
    described = {}
    for n in nodes:
        d = describe(n)
        if d is not None:
            described[n] = d
            producers = []
            for a in d[1]:
                g = group_of.get(a) if isinstance(a, Node) else None
                if g is not None and g not in producers and a not in g.reduced:
                    producers.append(g)
            merged = [m for g in producers for m in g.members]
            reduced = set().union(*[g.reduced for g in producers]) if producers else set()
            shapes = {g.reduction for g in producers if g.reduction is not None}
            chosen = None
            if producers and len(shapes) <= 1 and _valid(merged, n, pos, reduced):
                chosen = producers
            else:
                for g in sorted(producers, key=lambda g: -len(g.members)):
                    if _valid(g.members, n, pos, g.reduced):
                        chosen = [g]
                        break
            if chosen:
                target = chosen[0]
                for g in chosen[1:]:
                    target.members += g.members
                    target.reduced |= g.reduced
                    target.reduction = target.reduction or g.reduction
                    for m in g.members:
                        group_of[m] = target
            else:
                target = _Group()
            target.members.append(n)
            group_of[n] = target
            continue
        r = reduction(n)
        if r is None:
            continue
        g = group_of.get(r[1])
        if g is None or r[1] in g.reduced or (g.reduction is not None and
                                             g.reduction != (r[2], r[3])):
            continue
        if _valid(g.members, n, pos, g.reduced):
            g.members.append(n)
            g.reduced.add(n)
            g.reduction = (r[2], r[3])
            group_of[n] = g
            described[n] = ("reduce", r)
    unique = []
    for g in group_of.values():
        if g not in unique:
            unique.append(g)
    for g in unique:
        g.members.sort(key=pos.__getitem__)
    return [g for g in unique if _worth(g, described)], described


def _worth(group, described):
    ops = [described[m][0] for m in group.members]
    real = [op for op, m in zip(ops, group.members)
            if not (op == "mul_const" and described[m][2]["factor"] == 1)]
    return len(real) >= 2 or any(op in COMPOSITE for op in real)


def _kernel(group, described):
    """(FusedKernel, its input nodes, its output nodes)."""
    members = group.members
    local = {m: i for i, m in enumerate(members)}
    inputs = []

    def ref(a):
        if isinstance(a, Node):
            if a in local:
                return Ref("v", local[a])
            if a not in inputs:
                inputs.append(a)
            return Ref("in", inputs.index(a))
        return a
    calls, steps = [], []
    for m in members:
        calls.append((m.op, m.target, tuple(map_arg(m.args, ref)), dict(map_arg(m.kwargs, ref))))
        d = described[m]
        if d[0] == "reduce":
            kind, source, dims, keepdim = d[1]
            steps.append(("reduce", kind, ref(source), dims, keepdim))
        else:
            op, operands, params = d
            steps.append((op, [ref(a) for a in operands], params))
    inside = set(members)
    outputs = [m for m in members if any(u not in inside for u in m.users)]
    kernel = FusedKernel(calls, steps, [local[m] for m in outputs])
    return kernel, inputs, outputs


def fuse(gm):
    """A GraphModule computing what ``gm`` does, with its fusible groups as generated kernels
    (``gm`` itself where there are none)."""
    graph = Graph()
    copies = {}
    for n in gm.graph.nodes:
        copies[n] = graph.node_copy(n, copies.__getitem__)
    rewritten = rewrite(graph)
    groups, described = _groups(graph)
    if not groups and not rewritten:
        return gm
    last_of, member = {}, set()
    for g in groups:
        last_of[g.members[-1]] = g
        member.update(g.members)
    new = Graph()
    val_map = {}
    kernels = {}
    for n in graph.nodes:
        g = last_of.get(n)
        if g is not None:
            kernel, inputs, outputs = _kernel(g, described)
            name = f"{_PREFIX}{len(kernels)}"
            kernels[name] = kernel
            attr = new.create_node("get_attr", name)
            call = new.create_node("call_method", "run",
                                   (attr, *[val_map[a] for a in inputs]), {})
            for k, out in enumerate(outputs):
                val_map[out] = new.create_node("call_function", operator.getitem, (call, k))
            continue
        if n in member:
            continue
        val_map[n] = new.node_copy(n, val_map.__getitem__)
    for name, kernel in kernels.items():
        object.__setattr__(gm, name, kernel)
    try:
        fused = GraphModule(gm, new, type(gm).__name__)
    finally:
        for name in kernels:
            object.__delattr__(gm, name)
    fused.meta = dict(gm.meta)
    return fused


def kernels_of(gm):
    """The ``FusedKernel``s of a fused GraphModule."""
    return [v for k, v in vars(gm).items() if k.startswith(_PREFIX)]
