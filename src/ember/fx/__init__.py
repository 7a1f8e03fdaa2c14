"""``ember.fx``: capture a program as a graph and transform it, as ``torch.fx`` does.

``symbolic_trace(module)`` runs ``forward`` on Proxy objects and records each operation as a
``Node`` of a ``Graph``; a ``GraphModule`` holds the graph and the generated Python ``code`` of
its forward. ``Interpreter`` runs a graph node by node, ``Transformer`` rewrites one, and
``replace_pattern`` swaps subgraphs. Tracing patches ember's functions and Tensor methods only
while a trace runs: eager ember does no extra work.
"""
import ember as _ember

from . import immutable_collections  # noqa: F401
from .graph import Graph
from .graph_module import GraphModule
from .interpreter import Interpreter, Transformer
from .node import Node, has_side_effect, map_aggregate, map_arg
from .proxy import Proxy, TraceError
from .subgraph_rewriter import replace_pattern
from .tracer import PH, Tracer, is_fx_tracing, symbolic_trace, wrap  # noqa: F401
from . import graph, graph_module, interpreter, node, passes, proxy, subgraph_rewriter  # noqa: F401

has_side_effect(_ember._assert)

__all__ = ["symbolic_trace", "Tracer", "wrap", "Graph", "GraphModule", "Interpreter",
           "Transformer", "Node", "Proxy", "replace_pattern", "has_side_effect", "map_arg",
           "map_aggregate", "PH", "TraceError"]
