"""Capturing one call of a function into an ``ember.fx`` graph, and finding what keeps the
graph from standing for later calls.

The call runs for real under ember.jit's ``Recorder`` (its result is the call's result), and
the ember operations it applies to the inputs, the root module's parameters and buffers, and
tensors made during the call are recorded. Three things are watched while it runs:

- **graph breaks**: the function's Python code consumed a tensor's value (``bool``, ``int``,
  ``.item()``, ``.tolist()``, ``.numpy()``, iterating over it, printing it), called a function
  marked with ``ember.compiler.disable``, or a tensor the recorder could not follow was computed
  from recorded values (a frozen value). A graph with a break would replay the example's
  decision for every input, so the caller runs such a function eagerly.
- **size specializations**: Python code compared a size (``if x.size(0) > 4``), took ``len(x)``
  or ``x.numel()``. The graph then holds for the captured sizes only, never as a dynamic graph.
- **modules called**, whose ``training`` flags become guards.
"""
import operator
import os
import traceback
import warnings

from .. import Tensor
from ..fx.graph_module import GraphModule
from ..jit._recorder import Recorder, TracedInt, TracerWarning, default_is_leaf
from ..jit._trace import _graph_module, _parameter_names
from ..nn import Module
from .exc import Unsupported

__all__ = ["capture", "current", "Capture", "GraphBreak", "NO_ROOT"]

NO_ROOT = Module()   # the root of a captured plain function: it owns no parameters

_current = None

_BREAKING_WARNINGS = ("Converting a tensor to", "Iterating over a tensor", "Printing a tensor")
_SPECIALIZING_WARNINGS = ("Using len to get tensor shape",)
_IGNORED_WARNINGS = ("ember.tensor results are registered as constants",)
_PRINT_WARNING = ("Printing a tensor uses its values in Python: the compiled function runs "
                  "eagerly")
_THIS_PACKAGE = os.path.dirname(os.path.abspath(__file__))
_RECORDER_FILE = os.path.join(os.path.dirname(_THIS_PACKAGE), "jit", "_recorder.py")

# ember functions recorded even when no argument is traced, so that a replay draws fresh random
# numbers and makes fresh tensors rather than reusing the ones the captured call made
_ALWAYS_RECORDED = """
    rand randn randint randperm normal bernoulli multinomial poisson
    zeros ones empty full arange range linspace logspace eye tril_indices triu_indices
""".split()


def current():
    """The capture in progress, or None."""
    return _current


class GraphBreak:
    """Why a capture cannot stand for later calls, and the user's line that caused it."""

    def __init__(self, reason, filename=None, lineno=None, module=None):
        self.reason = reason
        self.filename = filename
        self.lineno = lineno
        self.module = module     # the innermost submodule of the root whose code broke

    def location(self):
        return f"{self.filename}:{self.lineno}" if self.filename else "an unknown line"

    def __str__(self):
        return f"Graph break in user code at {self.location()}\nReason: Unsupported: {self.reason}"

    def __repr__(self):
        return f"GraphBreak(reason={self.reason!r}, user_stack={self.location()!r})"


class Capture:
    """What one capture found: the graph module (None after a break), the breaks, whether a
    size was specialized, the modules called and the root attributes the graph holds."""

    def __init__(self, root):
        self.root = root
        self.graph_module = None
        self.breaks = []
        self.specialized = None
        self.modules = {}          # id -> module, every module called during the capture
        self.traced_modules = {}   # id -> module whose Python the graph holds (not a leaf)
        self.attributes = {}       # qualified name -> tensor of the root the graph holds
        self.fullgraph = False
        self.submodule_stack = []  # (path, module): submodules of the root being traced through
        self.warning_modules = {}  # id(warning) -> the submodule whose code gave it

    def graph_break(self, reason, filename=None, lineno=None, module=None):
        if module is None and self.submodule_stack:
            module = self.submodule_stack[-1]
        if module is False:     # the caller says: not a submodule's break
            module = None
        brk = GraphBreak(reason, filename, lineno, module)
        if self.fullgraph:
            raise Unsupported(f"{reason}\n  at {brk.location()} (fullgraph=True allows no "
                              f"graph break; remove fullgraph=True to run this function eagerly)")
        self.breaks.append(brk)

    def specialize(self, why, filename=None, lineno=None):
        if self.specialized is None:
            self.specialized = GraphBreak(why, filename, lineno)


def _user_frame(skip_files):
    """(filename, lineno) of the innermost frame outside ``skip_files`` and this package."""
    for frame in reversed(traceback.extract_stack()[:-1]):
        if frame.filename not in skip_files and not frame.filename.startswith(_THIS_PACKAGE):
            return frame.filename, frame.lineno
    return None, None


def _root_is_leaf(root, opaque, inline_layers=False):
    def is_leaf(module):
        return module is not root and (id(module) in opaque or (
            not inline_layers and default_is_leaf(module)))
    return is_leaf


def capture(fn, root, args, kwargs, *, fullgraph=False, name="forward", opaque=(),
            inline_layers=False):
    """Run ``fn(*args, **kwargs)`` once, recording it; return ``(result, Capture)``.
    ``opaque``: ids of submodules of ``root`` recorded as one call each (run eagerly inside
    the graph, as ember's own layers are). ``inline_layers``: record the ops inside ember's
    layers too (what an ahead-of-time backward needs); the Capture then keeps its
    ``recorder``."""
    global _current
    import ember
    cap = Capture(root)
    cap.fullgraph = fullgraph
    rec = Recorder(root, _root_is_leaf(root, opaque, inline_layers))
    if inline_layers:
        cap.recorder = rec
        rec.producers = {}
    rec.always_recorded = frozenset(getattr(ember, n) for n in _ALWAYS_RECORDED
                                    if hasattr(ember, n))
    names = [n if n.isidentifier() and n != "self" else f"{n}_arg"
             for n in _parameter_names(fn, len(args), kwargs)]
    for value in (*args, *kwargs.values()):
        if isinstance(value, Module):
            cap.modules[id(value)] = value
    if root is not NO_ROOT:
        cap.modules[id(root)] = root
        cap.traced_modules[id(root)] = root
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", TracerWarning)
        if fullgraph:
            warnings.filterwarnings("error", category=TracerWarning)
            for message in _IGNORED_WARNINGS + _SPECIALIZING_WARNINGS:
                warnings.filterwarnings("ignore", message=message, category=TracerWarning)
        try:
            with rec.active():
                _install_detectors(rec, cap, caught)
                _current = cap
                try:
                    for arg_name, value in zip(names, (*args, *kwargs.values())):
                        rec.placeholder(arg_name, value)
                    globals_ = getattr(getattr(fn, "__func__", fn), "__globals__", None)
                    if globals_ is not None:
                        rec.patch_globals(globals_)
                    if root is not NO_ROOT:
                        rec.patch_module_attributes(root)
                    _record_fused_layers(rec)
                    if inline_layers:
                        from ._aot import record_inside_ember
                        record_inside_ember(rec)
                    result = fn(*args, **kwargs)
                    unsupported = _unsupported_output(result)
                    if unsupported is None:
                        rec.graph.output(rec.create_arg(result))
                finally:
                    _current = None
        except TracerWarning as w:
            filename, lineno = _frame_before_recorder(w.__traceback__)
            raise Unsupported(f"{w}\n  at {filename}:{lineno} (fullgraph=True allows no graph "
                              f"break; remove fullgraph=True to run this function eagerly)"
                              ) from None
    _classify_warnings(caught, cap)
    if unsupported is not None:
        cap.graph_break(f"the function returns a {unsupported} (a graph returns tensors, "
                        f"Python scalars, dtypes, devices and tuples, lists and dicts of them)",
                        *_code_location(fn), module=False)
    for qual, tensor in rec.constants.items():
        if qual.split(".")[-1].startswith("_tensor_constant"):
            if tensor.grad_fn is not None:
                cap.graph_break(f"a tensor computed from the inputs by a call the capture could "
                                f"not record is held as a constant ({qual}, made by "
                                f"{type(tensor.grad_fn).__name__})")
        else:
            cap.attributes[qual] = tensor
    if not cap.breaks:
        try:
            cap.graph_module = _graph_module(GraphModule, root, rec, name)
        except Exception as e:     # a value the generated code cannot hold
            cap.graph_break(f"the captured graph cannot be built: {type(e).__name__}: {e}",
                            *_code_location(fn), module=False)
    return result, cap


def _record_fused_layers(rec):
    """Record each pass of a recurrent layer over its sequence as one call (its kernel computes
    on arrays, which no recording can follow), as ``ember.export`` does."""
    from ..jit._layers import recording_rnn_layer
    from ..nn.modules import rnn
    rec._patcher.patch(rnn.__dict__, "_rnn_layer", recording_rnn_layer())


def _unsupported_output(value):
    """The type name of the first value in ``value`` a graph cannot return, or None."""
    from .. import Size, device, dtype
    if isinstance(value, (Tensor, Size, dtype, device)) or type(value) in (
            bool, int, float, complex, str, type(None)) or isinstance(value, TracedInt):
        return None
    if isinstance(value, (tuple, list)):
        for item in value:
            found = _unsupported_output(item)
            if found is not None:
                return found
        return None
    if type(value) is dict:
        return _unsupported_output(tuple(value.values()))
    return type(value).__name__


def _code_location(fn):
    code = getattr(getattr(getattr(fn, "forward", fn), "__func__", fn), "__code__", None)
    return (code.co_filename, code.co_firstlineno) if code is not None else (None, None)


def _frame_before_recorder(tb):
    frames = traceback.extract_tb(tb)
    for i in range(len(frames) - 1, 0, -1):
        if frames[i].filename in (_RECORDER_FILE, __file__):
            caller = frames[i - 1]
            if caller.filename not in (_RECORDER_FILE, __file__):
                return caller.filename, caller.lineno
    return None, None


def _classify_warnings(caught, cap):
    for w in caught:
        if issubclass(w.category, TracerWarning):
            text = str(w.message)
            if text.startswith(_BREAKING_WARNINGS):
                cap.graph_break(_break_reason(text), w.filename, w.lineno,
                                cap.warning_modules.get(id(w)))
                continue
            if text.startswith(_SPECIALIZING_WARNINGS):
                cap.specialize("len() of a tensor", w.filename, w.lineno)
                continue
            if text.startswith(_IGNORED_WARNINGS):
                continue
        warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)


def _break_reason(text):
    if text.startswith("Converting a tensor to "):
        what = text[len("Converting a tensor to "):].split(" might")[0]
        return f"data-dependent Python code: a tensor converted to {what}"
    if text.startswith("Iterating over a tensor"):
        return "data-dependent Python code: iterating over a tensor"
    return "data-dependent Python code: printing a tensor"


def _install_detectors(rec, cap, caught):
    """Patches, for the capture only, that report reads of tensor values and sizes, and which
    submodule's code gave each warning of ``caught``."""
    patcher = rec._patcher
    traced_call = Module.__dict__["__call__"]

    def module_call(module, *args, **kwargs):
        cap.modules.setdefault(id(module), module)
        if rec.depth == 0 and not rec.is_leaf(module):
            cap.traced_modules.setdefault(id(module), module)
        path = rec.module_path(module) if rec.depth == 0 else None
        if not path or rec.is_leaf(module):
            return traced_call(module, *args, **kwargs)
        seen = len(caught)
        cap.submodule_stack.append(module)
        try:
            return traced_call(module, *args, **kwargs)
        finally:
            cap.submodule_stack.pop()
            for w in caught[seen:]:
                cap.warning_modules.setdefault(id(w), module)
    patcher.patch_method(Module, "__call__", module_call)
    module_setattr = Module.__setattr__

    def setattr_(module, name, value):
        if rec.depth == 0:
            cap.graph_break(f"the function sets a module attribute ({type(module).__name__}."
                            f"{name} = ...), a Python side effect a graph cannot replay",
                            *_user_frame((_RECORDER_FILE,)))
        module_setattr(module, name, value)
    patcher.patch_method(Module, "__setattr__", setattr_)

    for name in ("__repr__", "__format__"):
        patcher.patch_method(Tensor, name, _printing_method(rec, Tensor.__dict__[name]))
    numel = Tensor.__dict__["numel"]

    def counting_numel(self):
        if rec.depth == 0 and rec.is_traced(self):
            cap.specialize("x.numel()", *_user_frame((_RECORDER_FILE,)))
        return numel(self)
    patcher.patch_method(Tensor, "numel", counting_numel)
    for name in (*_COMPARISONS, *_SPECIALIZING):
        patcher.patch_method(TracedInt, name, _size_guard(rec, cap, name))


def _printing_method(rec, orig):
    def method(self, *args, **kwargs):
        if rec.depth == 0 and rec.is_traced(self):
            warnings.warn(_PRINT_WARNING, TracerWarning, stacklevel=2)
        rec.depth += 1
        try:
            return orig(self, *args, **kwargs)
        finally:
            rec.depth -= 1
    return method


_COMPARISONS = {"__eq__": operator.eq, "__ne__": operator.ne, "__lt__": operator.lt,
                "__le__": operator.le, "__gt__": operator.gt, "__ge__": operator.ge}
# int methods whose result is no TracedInt: the size becomes a plain Python value
_SPECIALIZING = ("__bool__", "__int__", "__float__", "__index__", "__truediv__",
                 "__rtruediv__", "__pow__", "__rpow__", "__abs__", "__round__", "__trunc__",
                 "__floor__", "__ceil__", "__divmod__", "__rdivmod__", "__lshift__",
                 "__rshift__", "__and__", "__or__", "__xor__", "__hash__")


def _size_guard(rec, cap, name):
    compare = _COMPARISONS.get(name)
    plain = getattr(int, name, None)

    def method(self, *args):
        if rec.depth == 0 and self._recorder is rec:
            cap.specialize("a size used as a Python value", *_user_frame((_RECORDER_FILE,)))
        value = int.__int__(self)
        args = tuple(int.__int__(a) if isinstance(a, TracedInt) else a for a in args)
        if compare is not None:
            return compare(value, args[0])
        return plain(value, *args)
    return method
