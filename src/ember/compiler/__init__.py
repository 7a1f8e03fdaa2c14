"""``ember.compiler``: the user-facing controls of ``ember.compile`` (torch.compiler's names)."""
from .._dynamo import (allow_in_graph, assume_constant_result, disable,
                       is_compiling, is_dynamo_compiling, list_backends)
from .._dynamo import reset as _reset

__all__ = ["reset", "disable", "is_compiling", "is_dynamo_compiling", "allow_in_graph",
           "list_backends", "assume_constant_result"]


def reset():
    """Forget every graph ember.compile has captured: the next call of each compiled function
    captures again."""
    _reset()
