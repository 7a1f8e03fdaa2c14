"""``ember._dynamo``: the capture behind ``ember.compile``, under the names of torch._dynamo
that programs call (``reset``, ``config``, ``explain``, ``exc``, ``disable``)."""
from . import config, exc
from ._api import OptimizedModule, compile  # noqa: F401
from ._backends import list_backends, lookup_backend  # noqa: F401
from ._compiled import reset_all as reset
from ._explain import ExplainOutput, explain  # noqa: F401
from ._markers import (allow_in_graph, assume_constant_result, disable,
                       is_compiling, is_dynamo_compiling)

__all__ = ["reset", "config", "exc", "explain", "list_backends", "OptimizedModule", "disable",
           "allow_in_graph", "assume_constant_result", "is_compiling", "is_dynamo_compiling"]
