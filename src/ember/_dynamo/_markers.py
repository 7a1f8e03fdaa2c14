"""Marks on user functions for ``ember.compile``, and the question whether a capture runs."""
import functools

from . import _capture, _compiled

__all__ = ["disable", "allow_in_graph", "assume_constant_result", "is_compiling",
           "is_dynamo_compiling"]


def is_compiling():
    """True while ember.compile captures a graph (the function is running to be recorded)."""
    return _capture.current() is not None


is_dynamo_compiling = is_compiling


def disable(fn=None, recursive=True, *, reason=None):
    """Run ``fn`` eagerly, outside ember.compile: a compiled function that calls it is not
    captured (a graph break) and runs eagerly. As a context use ``ember.compiler.disable()`` on
    a function; ``fn=None`` gives a decorator."""
    if fn is None:
        return functools.partial(disable, recursive=recursive, reason=reason)
    original = getattr(fn, "_torchdynamo_orig_callable", fn)

    @functools.wraps(original)
    def eager(*args, **kwargs):
        cap = _capture.current()
        if cap is not None:
            name = getattr(original, "__name__", repr(original))
            code = getattr(original, "__code__", None)
            cap.graph_break(f"call to a function marked with ember.compiler.disable: {name}"
                            + (f" ({reason})" if reason else ""),
                            code.co_filename if code else None,
                            code.co_firstlineno if code else None)
        _compiled._disabled[0] += 1
        try:
            return original(*args, **kwargs)
        finally:
            _compiled._disabled[0] -= 1
    eager._torchdynamo_disable = True
    return eager


def allow_in_graph(fn):
    """Accepted for torch's API: ember records the ember operations ``fn`` runs, so a function
    of tensor operations is in the graph already. Returns ``fn``."""
    return fn


def assume_constant_result(fn):
    """Accepted for torch's API: ``fn``'s Python result (not a tensor computed from the inputs)
    is kept as a constant of the graph, as ember's capture keeps every Python value. Returns
    ``fn``."""
    return fn
