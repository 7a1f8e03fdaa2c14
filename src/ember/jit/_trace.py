"""``trace`` and ``trace_module``: run a module (or function) once on example inputs and turn
the ops it executed into a module that replays them (``TracedModule``, ``ScriptFunction``)."""
import difflib
import inspect
import warnings

from ..fx.graph_module import GraphModule
from ..nn import Module
from ._recorder import Recorder, TracerWarning, default_is_leaf

__all__ = ["trace", "trace_module", "ScriptModule", "ScriptFunction", "TracedModule",
           "TopLevelTracedModule", "TracingCheckError", "record_graph"]


class TracingCheckError(Exception):
    """Raised by ``check_trace`` when tracing the same program again gives another graph."""

    def __init__(self, graph_diff_error, tensor_compare_error=None, extra_msg=None):
        self.message = "Tracing failed sanity checks!\n"
        if extra_msg is not None:
            self.message += extra_msg + "\n"
        if graph_diff_error is not None:
            self.message += "ERROR: Graphs differed across invocations!\n"
            self.message += _indent(graph_diff_error) + "\n"
        if tensor_compare_error is not None:
            self.message += ("ERROR: Tensor-valued Constant nodes differed in value across "
                             "invocations. This often indicates that the tracer has encountered "
                             "untraceable code.\n" + _indent(tensor_compare_error) + "\n")
        super().__init__(self.message)


def _indent(s):
    return "\n".join("\t" + line for line in s.splitlines())


class ScriptModule(Module):
    """The base class of the modules ``ember.jit`` makes (``TracedModule``). ember has no
    TorchScript: a ScriptModule here replays a recorded graph of ember ops."""


class TracedModule(GraphModule, ScriptModule):
    """A module produced by ``ember.jit.trace``: its ``forward`` replays the ops recorded while
    the original module ran on the example inputs (Python control flow frozen as it went).
    ``graph`` is the recorded ``ember.fx.Graph``, ``code`` the Python source of ``forward``;
    ``save`` writes it in ember's trace format (see ``ember.jit.save``). Parameters and buffers
    are the original module's own tensors, so training the traced module trains the original."""

    def __init__(self, root, graph, class_name="TracedModule", original_name=None):
        super().__init__(root, graph, class_name)
        self.original_name = original_name or class_name
        self._traced_methods = {}

    @property
    def inlined_graph(self):
        """The graph (ember records no calls to inline: the same as ``graph``)."""
        return self.graph

    def save(self, f, _extra_files=None):
        """Save this module to ``f`` (a path or a binary file): see ``ember.jit.save``."""
        from ._archive import save
        save(self, f, _extra_files)

    def __getattr__(self, name):
        methods = self.__dict__.get("_traced_methods")
        if methods and name in methods:
            return methods[name]
        return super().__getattr__(name)


class TopLevelTracedModule(TracedModule):
    """The module ``trace`` returns for an ``nn.Module``."""


class TracedMethod:
    """A traced method other than ``forward`` (from ``trace_module``): a callable replaying
    its graph on the traced module's parameters."""

    def __init__(self, name, graph_module):
        self.name = name
        self.graph_module = graph_module

    @property
    def graph(self):
        return self.graph_module.graph

    @property
    def code(self):
        return self.graph_module.code

    def __call__(self, *args, **kwargs):
        return self.graph_module(*args, **kwargs)


class ScriptFunction:
    """A function produced by ``ember.jit.trace`` of a plain function: calling it replays the
    recorded ops. ``graph``, ``code`` and ``save`` as a TracedModule's."""

    def __init__(self, name, graph_module):
        self.name = self.__name__ = self.__qualname__ = name
        self.graph_module = graph_module

    @property
    def graph(self):
        return self.graph_module.graph

    @property
    def code(self):
        return self.graph_module.code

    @property
    def inlined_graph(self):
        return self.graph_module.graph

    def save(self, f, _extra_files=None):
        from ._archive import save
        save(self, f, _extra_files)

    def __call__(self, *args, **kwargs):
        return self.graph_module(*args, **kwargs)

    def __repr__(self):
        return f"<ember.jit.ScriptFunction {self.name}>"


# -- recording -------------------------------------------------------------------------------------
def _parameter_names(fn, n_args, kwarg_names):
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        params = []
    names = []
    for i in range(n_args):
        if i < len(params) and params[i].kind in (params[i].POSITIONAL_ONLY,
                                                  params[i].POSITIONAL_OR_KEYWORD):
            names.append(params[i].name)
        else:
            names.append(f"input_{i}")
    return names + list(kwarg_names)


def _check_output(result, strict):
    """With ``strict``, a list output gives a TracerWarning and a dict output raises, as
    torch's tracer does (their structure could depend on the inputs)."""
    if not strict:
        return
    for kind, name in ((list, "list"), (dict, "dict")):
        if type(result) is kind:
            message = (
                f"Encountering a {name} at the output of the tracer might cause the trace to be "
                f"incorrect, this is only valid if the container structure does not change based "
                f"on the module's inputs. Consider using a constant container instead (e.g. for "
                f"`list`, use a `tuple` instead. for `dict`, use a `NamedTuple` instead). If you "
                f"absolutely need this and know the side effects, pass strict=False to trace() to "
                f"allow this behavior.")
            if kind is list:
                warnings.warn(message, TracerWarning, stacklevel=4)
            else:
                raise RuntimeError(message)


def record_graph(root, fn, args, kwargs=None, strict=True, is_leaf=default_is_leaf,
                 extra_globals=(), inline_callables=False):
    """Run ``fn(*args, **kwargs)`` (``fn`` a method of ``root`` or a function) under a
    ``Recorder`` and return ``(recorder, result)``; the recorder's ``graph`` ends in the output
    node. ``extra_globals``: more module namespaces whose ember functions imported by name are
    recorded (as those of ``fn``'s module are). ``inline_callables``: a call that receives a
    module or a function is recorded by its inside, not as one node."""
    kwargs = dict(kwargs or {})
    rec = Recorder(root, is_leaf)
    rec.inline_callables = inline_callables
    names = _parameter_names(fn, len(args), kwargs)
    with rec.active():
        for name, value in zip(names, (*args, *kwargs.values())):
            rec.placeholder(name, value)
        globals_ = getattr(inspect.unwrap(fn), "__globals__", None)
        if globals_ is not None:
            rec.patch_globals(globals_)
        for namespace in extra_globals:
            rec.patch_globals(namespace)
        if isinstance(root, Module) and root is not _FUNCTION_ROOT:
            rec.patch_module_attributes(root)
        result = fn(*args, **kwargs)
        _check_output(result, strict)
        rec.graph.output(rec.create_arg(result))
    return rec, result


_FUNCTION_ROOT = Module()


def layer_namespaces():
    """The namespaces of ember's layers and functional modules, for ``extra_globals``: the
    ember functions they call by name (``generate_square_subsequent_mask``'s ``full`` and
    ``triu``) are then recorded as a user module's are."""
    import sys
    return [vars(m) for name, m in list(sys.modules.items())
            if name.startswith("ember.nn.") and m is not None]


def _graph_module(cls, root, rec, class_name, **kw):
    attrs = dict(rec.constants)
    for node in rec.graph.nodes:
        # a submodule is a call_module target, or a get_attr one where a call received it
        if node.op == "call_module" or (node.op == "get_attr" and node.target not in attrs):
            attrs[node.target] = root.get_submodule(node.target)
    gm = cls(attrs, rec.graph, class_name, **kw)
    gm.training = root.training
    gm.meta["nondeterministic"] = [n.name for n in rec.nondeterministic]
    return gm


def _as_tuple(example_inputs):
    from .. import Tensor
    if example_inputs is None:
        return ()
    if isinstance(example_inputs, Tensor) or not isinstance(example_inputs, tuple):
        return (example_inputs,)
    return example_inputs


def trace(func, example_inputs=None, optimize=None, check_trace=True, check_inputs=None,
          check_tolerance=1e-5, strict=True, _force_outplace=False, _module_class=None,
          _compilation_unit=None, example_kwarg_inputs=None, _store_inputs=True):
    """Trace a function or module and return an executable that replays the recorded ops.

    ``func`` runs once on ``example_inputs`` (a tensor or a tuple of them; or
    ``example_kwarg_inputs``, a dict of keyword arguments) and every ember operation it applies
    to the inputs, parameters and buffers is recorded. Python control flow is frozen as it ran:
    an ``if`` on a tensor, ``int(x)`` or ``x.tolist()`` gives a ``TracerWarning``. Sizes
    (``x.size(0)``, ``x.shape``) are recorded, so a traced ``x.view(x.size(0), -1)`` follows the
    batch size. For an ``nn.Module`` the result is a ``TracedModule`` (its ``forward`` traced;
    ``graph``, ``code``, ``save``); for a function, a ``ScriptFunction``.

    ``check_trace`` traces again on ``check_inputs`` (by default the example inputs) and raises
    ``TracingCheckError`` when the graphs differ; outputs that differ between the traced and
    the Python program (within ``check_tolerance``) give a ``TracerWarning``. ``strict=False``
    allows list and dict outputs.

    Unlike torch, ember records its own ops rather than TorchScript: ember's layers
    (``ember.nn`` modules) are single ``call_module`` nodes, and ``save`` writes ember's format.
    """
    if isinstance(func, (ScriptModule, ScriptFunction)):
        warnings.warn("The input to trace is already a ScriptModule, tracing it is a no-op. "
                      "Returning the object as is.", stacklevel=2)
        return func
    if isinstance(func, Module):
        if example_inputs is None and example_kwarg_inputs is None:
            raise RuntimeError("example_kwarg_inputs or example_inputs must be provided")
        inputs = example_kwarg_inputs if example_inputs is None else example_inputs
        return trace_module(func, {"forward": inputs}, None, check_trace,
                            _wrap_check_inputs(check_inputs), check_tolerance, strict,
                            example_inputs_is_kwarg=example_inputs is None)
    owner = getattr(func, "__self__", None)
    if isinstance(owner, Module) and hasattr(func, "__name__"):
        return trace_module(owner, {func.__name__: example_inputs}, None, check_trace,
                            _wrap_check_inputs(check_inputs), check_tolerance, strict)
    if not callable(func):
        raise TypeError(f"trace expects an ember.nn.Module or a function, got "
                        f"{type(func).__name__}")
    if example_inputs is None and example_kwarg_inputs is None:
        raise RuntimeError("example_kwarg_inputs or example_inputs must be provided")
    args, kwargs = ((), dict(example_kwarg_inputs)) if example_inputs is None else (
        _as_tuple(example_inputs), {})
    rec, _ = record_graph(_FUNCTION_ROOT, func, args, kwargs, strict)
    name = getattr(func, "__name__", "function")
    gm = _graph_module(GraphModule, _FUNCTION_ROOT, rec, name)
    traced = ScriptFunction(name, gm)
    if check_trace:
        _check_trace(check_inputs or [(args, kwargs)], func, traced, check_tolerance, strict,
                     _FUNCTION_ROOT, rec.graph, func)
    return traced


def _wrap_check_inputs(check_inputs):
    if check_inputs is None:
        return None
    return [{"forward": c} for c in check_inputs]


def trace_module(mod, inputs, optimize=None, check_trace=True, check_inputs=None,
                 check_tolerance=1e-5, strict=True, _force_outplace=False, _module_class=None,
                 _compilation_unit=None, example_inputs_is_kwarg=False, _store_inputs=True):
    """Trace the methods of ``mod`` named by ``inputs`` (a dict: method name -> example inputs)
    and return a ``TopLevelTracedModule`` whose ``forward`` (and each other traced method,
    as an attribute) replays what ran. See ``trace`` for the checks."""
    if not isinstance(mod, Module):
        raise AttributeError("expected torch.nn.Module as the first argument")
    if not isinstance(inputs, dict):
        raise AttributeError("expected a dictionary of (method_name, input) pairs")
    graphs = {}
    for method_name, example in inputs.items():
        args, kwargs = _split_inputs(example, example_inputs_is_kwarg)
        method = getattr(mod, method_name)
        rec, _ = record_graph(mod, method, args, kwargs, strict)
        graphs[method_name] = (rec, args, kwargs)
    class_name = type(mod).__name__
    if "forward" in graphs:
        rec = graphs["forward"][0]
    else:
        rec = Recorder(mod)
        rec.graph.output(None)
    traced = _graph_module(TopLevelTracedModule, mod, rec, class_name, original_name=class_name)
    for method_name, (method_rec, _, _) in graphs.items():
        if method_name != "forward":
            gm = _graph_module(GraphModule, mod, method_rec, f"{class_name}_{method_name}")
            traced._traced_methods[method_name] = TracedMethod(method_name, gm)
    if check_trace:
        for method_name, (method_rec, args, kwargs) in graphs.items():
            checks = ([_split_inputs(c[method_name], example_inputs_is_kwarg)
                       for c in check_inputs] if check_inputs else [(args, kwargs)])
            replay = traced if method_name == "forward" else traced._traced_methods[method_name]
            _check_trace(checks, getattr(mod, method_name), replay, check_tolerance, strict, mod,
                         method_rec.graph, getattr(mod, method_name))
    return traced


def _split_inputs(example, is_kwarg):
    if is_kwarg or isinstance(example, dict):
        return (), dict(example)
    return _as_tuple(example), {}


# -- check_trace -----------------------------------------------------------------------------------
def _clone_inputs(value):
    from .. import Tensor
    if isinstance(value, Tensor):
        out = value.detach().clone()
        return out.requires_grad_(value.requires_grad) if out.is_floating_point() else out
    if isinstance(value, tuple):
        return tuple(_clone_inputs(v) for v in value)
    if isinstance(value, list):
        return [_clone_inputs(v) for v in value]
    if isinstance(value, dict):
        return {k: _clone_inputs(v) for k, v in value.items()}
    return value


def _tensors(value):
    from .. import Tensor
    if isinstance(value, Tensor):
        return [value]
    if isinstance(value, (tuple, list)):
        return [t for v in value for t in _tensors(v)]
    if isinstance(value, dict):
        return [t for v in value.values() for t in _tensors(v)]
    return []


def _check_trace(check_inputs, func, traced, check_tolerance, strict, root, graph, method):
    import ember
    for check in check_inputs:
        args, kwargs = check if isinstance(check, tuple) and len(check) == 2 and isinstance(
            check[1], dict) else (_as_tuple(check), {})
        rec, _ = record_graph(root, method, _clone_inputs(args), _clone_inputs(kwargs), strict)
        before, after = str(graph), str(rec.graph)
        if before != after:
            diff = "\n".join(difflib.ndiff(before.splitlines(), after.splitlines()))
            raise TracingCheckError("Graph diff:\n" + _indent(diff))
        with ember.no_grad():
            traced_outs = _tensors(traced(*_clone_inputs(args), **_clone_inputs(kwargs)))
            fn_outs = _tensors(func(*_clone_inputs(args), **_clone_inputs(kwargs)))
        nondeterministic = [n for n in rec.nondeterministic]
        for i, (orig, ref) in enumerate(zip(traced_outs, fn_outs)):
            try:
                ember.testing.assert_close(orig.double() if orig.is_floating_point() else orig,
                                           ref.double() if ref.is_floating_point() else ref,
                                           rtol=check_tolerance, atol=1e-5, equal_nan=True)
            except AssertionError as e:
                if nondeterministic:
                    nodes = "\n".join(n.format_node() or n.name for n in nondeterministic)
                    warnings.warn("Trace had nondeterministic nodes. Did you forget call .eval() "
                                  "on your model? Nodes:\n" + nodes + "\nThis may cause errors "
                                  "in trace checking. To disable trace checking, pass "
                                  "check_trace=False to ember.jit.trace()", TracerWarning,
                                  stacklevel=4)
                warnings.warn(f"Output nr {i + 1}. of the traced function does not match the "
                              f"corresponding output of the Python function. Detailed error:\n"
                              f"{e}", TracerWarning, stacklevel=4)
                break
