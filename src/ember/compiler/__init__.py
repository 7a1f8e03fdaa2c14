"""``ember.compiler``: the user-facing controls of ``ember.compile`` (torch.compiler's names)."""
from .._dynamo import (allow_in_graph, assume_constant_result, disable,
                       is_compiling, is_dynamo_compiling, list_backends)
from .._dynamo import reset as _reset
from .._dynamo._stance import set_stance

__all__ = ["compile", "reset", "disable", "is_compiling", "is_dynamo_compiling",
           "allow_in_graph", "list_backends", "assume_constant_result", "set_stance",
           "cudagraph_mark_step_begin", "is_exporting"]


def compile(*args, **kwargs):
    """The same as ``ember.compile``."""
    from .. import compile as _compile
    return _compile(*args, **kwargs)


def cudagraph_mark_step_begin():
    """Accepted for torch's API: ember records no CUDA graphs, so there is no step to mark."""


def is_exporting():
    """True while ``ember.export.export`` records a program."""
    from ..jit._recorder import active
    rec = active()
    return rec is not None and rec.inline_callables


def reset():
    """Forget every graph ember.compile has captured: the next call of each compiled function
    captures again."""
    _reset()
