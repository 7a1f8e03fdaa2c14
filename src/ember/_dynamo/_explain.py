"""``ember._dynamo.explain``: run a function once under ember.compile and report its graphs
and graph breaks."""
from ._compiled import CompiledFunction

__all__ = ["explain", "ExplainOutput"]


class ExplainOutput:
    """What ``explain`` found, under the names of torch's ExplainOutput."""

    def __init__(self, graphs, break_reasons):
        self.graphs = graphs
        self.graph_count = len(graphs)
        self.break_reasons = break_reasons
        self.graph_break_count = len(break_reasons)
        self.ops_per_graph = [[n.target for n in g.graph.nodes
                               if n.op in ("call_function", "call_method", "call_module")]
                              for g in graphs]
        self.op_count = sum(len(ops) for ops in self.ops_per_graph)

    def __str__(self):
        lines = [f"Graph Count: {self.graph_count}",
                 f"Graph Break Count: {self.graph_break_count}",
                 f"Op Count: {self.op_count}"]
        if self.break_reasons:
            lines.append("Break Reasons:")
            lines += [f"  Break Reason {i + 1}:\n    {b}" for i, b in
                      enumerate(self.break_reasons)]
        return "\n".join(lines)


def explain(f, *extra_args, **extra_kwargs):
    """``explain(f)(*args, **kwargs)`` runs ``f`` once, capturing it, and returns an
    ``ExplainOutput`` with its graphs and the graph breaks found."""
    def inner(*args, **kwargs):
        from ..nn import Module
        from ._capture import NO_ROOT
        graphs = []

        def collect(gm, example_inputs):
            graphs.append(gm)
            return gm.forward
        root = f if isinstance(f, Module) else NO_ROOT
        compiled = CompiledFunction(f, root, backend=collect)
        compiled(*args, **kwargs)
        breaks = [compiled.graph_break] if compiled.graph_break is not None else []
        return ExplainOutput(graphs, breaks)
    if extra_args or extra_kwargs:
        return inner(*extra_args, **extra_kwargs)
    return inner
