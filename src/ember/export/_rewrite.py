"""Replacing calls in a graph by the ops of their decompositions (``run_decompositions``)."""
import inspect

from ..fx.node import Node, map_arg

__all__ = ["decompose"]


def _contains_node(value):
    found = []
    map_arg(value, found.append)
    return bool(found)


def _decomposition_graph(decomposition, bound):
    """The graph of ``decomposition`` traced with the Node-valued arguments as placeholders and
    the others fixed, or None when the decomposition declines (NotImplementedError)."""
    from .. import fx
    constants, node_names = {}, []
    for name, value in bound.arguments.items():
        if isinstance(value, Node):
            node_names.append(name)
        elif _contains_node(value):
            return None
        else:
            constants[name] = value
    try:
        return fx.symbolic_trace(_with_constants(decomposition, node_names, constants)).graph
    except NotImplementedError:
        return None


def _with_constants(fn, node_names, constants):
    """``fn`` with the arguments in ``constants`` fixed: a function of ``node_names`` only
    (parameter names of ember functions), so that tracing it gives one placeholder each."""
    params = ", ".join(node_names)
    passed = ", ".join(f"{n}={n}" for n in node_names)
    source = f"def with_constants({params}):\n    return fn(**constants, {passed})\n"
    namespace = {"fn": fn, "constants": constants}
    exec(compile(source, "<decomposition>", "exec"), namespace)
    return namespace["with_constants"]


def decompose(graph, table):
    """A copy of ``graph`` with each call_function node whose target is in ``table`` replaced by
    the nodes of its decomposition."""
    from ..fx.graph import Graph
    new = Graph()
    env = {}
    for node in graph.nodes:
        decomposition = table.get(node.target) if node.op == "call_function" else None
        if decomposition is not None:
            try:
                bound = inspect.signature(node.target).bind(*node.args, **node.kwargs)
                bound.apply_defaults()
            except (TypeError, ValueError):
                bound = None
            sub = None if bound is None else _decomposition_graph(decomposition, bound)
            if sub is not None:
                values = [env[value] for value in bound.arguments.values()
                          if isinstance(value, Node)]
                placeholders = [ph for ph in sub.nodes if ph.op == "placeholder"]
                val_map = dict(zip(placeholders, values))
                env[node] = new.graph_copy(sub, val_map, return_output_node=False)
                continue
        env[node] = new.node_copy(node, lambda n: env[n])
    new.lint()
    return new
