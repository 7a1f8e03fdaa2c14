"""``replace_pattern``: find the subgraphs of a GraphModule that match a pattern function and
replace each with a replacement function."""
from typing import NamedTuple

from .graph_module import GraphModule
from .node import Node

__all__ = ["Match", "replace_pattern"]


class Match(NamedTuple):
    """One match: ``anchor`` is the node of the graph that the pattern's output matched, and
    ``nodes_map`` maps the pattern's nodes to the graph's."""
    anchor: Node
    nodes_map: dict[Node, Node]


def _to_graph_module(f):
    if isinstance(f, GraphModule):
        return f
    from .tracer import symbolic_trace
    return symbolic_trace(f)


def _args_match(pa, ga, nodes_map, matched):
    if isinstance(pa, Node) and pa.op == "placeholder" and not isinstance(ga, Node):
        # an input of the pattern also matches a constant argument
        if pa in nodes_map:
            bound = nodes_map[pa]
            return not isinstance(bound, Node) and type(bound) is type(ga) and bound == ga
        nodes_map[pa] = ga
        return True
    if isinstance(pa, Node):
        return isinstance(ga, Node) and _nodes_match(pa, ga, nodes_map, matched)
    if isinstance(ga, Node):
        return False
    if isinstance(pa, (tuple, list)):
        return (isinstance(ga, (tuple, list)) and len(pa) == len(ga)
                and all(_args_match(a, b, nodes_map, matched) for a, b in zip(pa, ga)))
    if isinstance(pa, dict):
        return (isinstance(ga, dict) and pa.keys() == ga.keys()
                and all(_args_match(pa[k], ga[k], nodes_map, matched) for k in pa))
    if isinstance(pa, slice):
        return (isinstance(ga, slice)
                and _args_match((pa.start, pa.stop, pa.step), (ga.start, ga.stop, ga.step),
                                nodes_map, matched))
    if type(pa) is not type(ga):
        return False
    try:
        return bool(pa == ga)
    except Exception:
        return pa is ga


def _nodes_match(pn, gn, nodes_map, matched):
    """Try to match pattern node ``pn`` to graph node ``gn`` (and, backwards, their inputs)."""
    if pn in nodes_map:
        return nodes_map[pn] is gn
    if gn in matched:
        return False
    if pn.op == "placeholder":
        nodes_map[pn] = gn
        matched[gn] = pn
        return True
    if pn.op != gn.op or pn.target != gn.target:
        return False
    if len(pn.args) != len(gn.args) or pn.kwargs.keys() != gn.kwargs.keys():
        return False
    saved = (dict(nodes_map), dict(matched))
    nodes_map[pn] = gn
    matched[gn] = pn
    if (_args_match(pn.args, gn.args, nodes_map, matched)
            and _args_match(pn.kwargs, gn.kwargs, nodes_map, matched)):
        return True
    nodes_map.clear()
    nodes_map.update(saved[0])
    matched.clear()
    matched.update(saved[1])
    return False


def _find_matches(pattern_graph, graph):
    pattern_nodes = list(pattern_graph.nodes)
    output = next(n for n in pattern_nodes if n.op == "output")
    out = output.args[0]
    anchors = list(out) if isinstance(out, (tuple, list)) else [out]
    if not all(isinstance(a, Node) for a in anchors):
        raise ValueError("replace_pattern: the pattern must return the values it computes")
    inner = [n for n in pattern_nodes if n.op not in ("placeholder", "output")]
    graph_nodes = list(graph.nodes)
    matches = []

    def search(i, nodes_map, matched):
        if i == len(anchors):
            # the nodes inside the match (other than those it returns) may not be used outside it
            for pn in inner:
                if pn in anchors:
                    continue
                if any(user not in matched for user in nodes_map[pn].users):
                    return
            matches.append(dict(nodes_map))
            return
        for gn in graph_nodes:
            if gn.op in ("placeholder", "output"):
                continue
            nm, md = dict(nodes_map), dict(matched)
            if _nodes_match(anchors[i], gn, nm, md):
                search(i + 1, nm, md)
                if i == 0 and matches and matches[-1][anchors[0]] is gn:
                    continue

    search(0, {}, {})
    # keep the first of overlapping matches
    kept, used = [], set()
    for m in matches:
        internal = {gn for pn, gn in m.items() if pn.op != "placeholder"}
        if internal & used:
            continue
        used |= internal
        kept.append(m)
    placeholders = [n for n in pattern_nodes if n.op == "placeholder"]
    return kept, anchors, placeholders


def replace_pattern(gm, pattern, replacement):
    """Find every subgraph of ``gm``'s graph that matches the graph of ``pattern`` (a function
    or GraphModule, traced with ``symbolic_trace``) and replace it by the graph of
    ``replacement``, which takes the same inputs and returns as many values. Matches are on
    ops and targets, with the pattern's inputs matching anything; a match whose inner values are
    used outside it, or that overlaps an earlier one, is left alone. ``gm`` is recompiled.
    Returns the list of ``Match`` es."""
    original_graph = gm.graph
    pattern_gm = _to_graph_module(pattern)
    replacement_gm = _to_graph_module(replacement)
    pattern_graph, replacement_graph = pattern_gm.graph, replacement_gm.graph
    found, anchors, pattern_placeholders = _find_matches(pattern_graph, original_graph)
    replacement_placeholders = [n for n in replacement_graph.nodes if n.op == "placeholder"]
    if len(replacement_placeholders) != len(pattern_placeholders):
        raise ValueError(f"replace_pattern: the pattern takes {len(pattern_placeholders)} inputs but "
                         f"the replacement takes {len(replacement_placeholders)}")
    changed = {}
    results = []
    for nodes_map in found:
        val_map = {}
        for rn, pn in zip(replacement_placeholders, pattern_placeholders):
            gn = nodes_map[pn]
            while gn in changed:
                gn = changed[gn]
            val_map[rn] = gn
        returning = [nodes_map[a] for a in anchors]
        user_nodes = set()
        for n in returning:
            user_nodes.update(n.users)
        first_user = next(n for n in original_graph.nodes if n in user_nodes)
        with original_graph.inserting_before(first_user):
            copied = original_graph.graph_copy(replacement_graph, val_map)
        if isinstance(copied, Node) or not isinstance(copied, (tuple, list)):
            copied = (copied,)
        if len(copied) != len(returning):
            raise ValueError(f"replace_pattern: the pattern returns {len(returning)} values but "
                             f"the replacement returns {len(copied)}")
        for gn, new in zip(returning, copied):
            gn.replace_all_uses_with(new)
            changed[gn] = new
        for pn in reversed(pattern_graph.nodes):
            if pn.op not in ("placeholder", "output"):
                original_graph.erase_node(nodes_map[pn])
        results.append(Match(anchor=returning[0], nodes_map=nodes_map))
    gm.recompile()
    from ..nn import Module
    if isinstance(replacement, Module):
        for node in original_graph.nodes:
            if node.op in ("call_module", "get_attr"):
                try:
                    gm.get_submodule(node.target) if node.op == "call_module" else None
                    continue
                except AttributeError:
                    pass
                gm.add_submodule(node.target, replacement.get_submodule(node.target))
    return results
