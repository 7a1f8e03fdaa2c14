"""``Recorder``: runs a module's forward on real tensors once and records the operations it ran
into an ``ember.fx.Graph``.

Recording reuses ember.fx's patching (``ember.fx._patching``): while a recorder is active, the
functions of ember's public namespaces, the ember functions that module code reached by name,
and ``ember.Tensor``'s methods and operators are replaced with wrappers. A wrapper computes the
real result and, when one of its arguments is a traced value (an input, a value computed from
one, a parameter or a buffer of the root), adds a node for the call. Calls made from inside a
recorded call are not recorded (``depth``), so a node is the outermost ember call, as the
program wrote it. ember's own layers (``ember.nn``, except containers) become ``call_module``
nodes, so nothing of their internals is recorded. When the trace ends everything is put back:
eager ember does no extra work.

Sizes read from a traced value (``x.size(0)``, ``x.shape``) are ``TracedInt``s: ints that also
remember how they were computed, so that ``x.view(x.size(0), -1)`` replays for another batch
size, as torch's tracer records sizes. Where a traced value becomes a plain Python value
(``int(x)``, ``x.tolist()``, ``if x > 0``) a ``TracerWarning`` says that the trace froze it.
"""
import contextlib
import functools
import operator
import types
import warnings

from ..fx._patching import (_Patcher, _is_ember_function, _namespaces, _NEVER_WRAP,
                            ember_functions, namespace_of)
from ..fx.graph import Graph
from ..fx.node import named_tuple_of

__all__ = ["Recorder", "TracerWarning", "TracedInt", "active", "setitem"]


class TracerWarning(Warning):
    """Warns that a trace may not generalize: a traced value became a Python value, and the
    trace recorded it as a constant."""

    @staticmethod
    def ignore_lib_warnings():
        warnings.filterwarnings("ignore", category=TracerWarning, module=r"ember(\.|$)")


_active = None


def active():
    """The recorder of the trace in progress, or None."""
    return _active


def setitem(tensor, index, value):
    """``tensor[index] = value``, returning ``tensor``: how a trace records an indexed
    assignment, so that later uses of ``tensor`` follow the node."""
    tensor[index] = value
    return tensor


_CONVERSION_WARNINGS = {
    "__int__": "a Python integer", "__index__": "a Python integer", "__float__": "a Python float",
    "__complex__": "a Python complex", "__bool__": "a Python boolean", "tolist": "a Python list",
    "item": "a Python number", "numpy": "a NumPy array", "__array__": "a NumPy array",
}
_ITERATION_WARNING = ("Iterating over a tensor might cause the trace to be incorrect. Passing a "
                      "tensor of different shape won't change the number of iterations executed "
                      "(and might lead to errors or silently give incorrect results).")
_LEN_WARNING = ("Using len to get tensor shape might cause the trace to be incorrect. Recommended "
                "usage would be tensor.shape[0]. Passing a tensor of different shape might lead "
                "to errors or silently give incorrect results.")


def _conversion_warning(what):
    return (f"Converting a tensor to {what} might cause the trace to be incorrect. We can't "
            f"record the data flow of Python values, so this value will be treated as a constant "
            f"in the future. This means that the trace might not generalize to other inputs!")


# Tensor methods that answer about a tensor (or change its autograd state) and compute nothing
_NOT_RECORDED = frozenset("""
    size dim ndimension numel nelement element_size stride storage_offset is_contiguous data_ptr
    is_floating_point is_complex is_signed get_device untyped_storage storage is_set_to
    register_hook retain_grad backward requires_grad_ share_memory_ is_shared is_pinned
    pin_memory type_as_str __repr__ __format__ __hash__ __reduce_ex__ __deepcopy__ __len__
    __iter__ __dlpack__ __dlpack_device__ __new__ __bool__ __int__ __index__ __float__
    __complex__ __array__ item tolist numpy
""".split())

# operators recorded as the operator module's function (``x + 1`` prints as ``x + 1``)
_OPERATORS = {
    "__add__": operator.add, "__sub__": operator.sub, "__mul__": operator.mul,
    "__truediv__": operator.truediv, "__floordiv__": operator.floordiv, "__mod__": operator.mod,
    "__pow__": operator.pow, "__matmul__": operator.matmul, "__and__": operator.and_,
    "__or__": operator.or_, "__xor__": operator.xor, "__lshift__": operator.lshift,
    "__rshift__": operator.rshift, "__eq__": operator.eq, "__ne__": operator.ne,
    "__lt__": operator.lt, "__le__": operator.le, "__gt__": operator.gt, "__ge__": operator.ge,
    "__neg__": operator.neg, "__pos__": operator.pos, "__invert__": operator.invert,
    "__getitem__": operator.getitem,
}
_REFLECTED = {f"__r{name[2:]}": fn for name, fn in _OPERATORS.items()
              if name not in ("__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__",
                              "__neg__", "__pos__", "__invert__", "__getitem__")}
_INPLACE = {f"__i{name[2:]}": name[2:-2] + "_" for name in (
    "__add__", "__sub__", "__mul__", "__truediv__", "__floordiv__", "__mod__", "__pow__",
    "__and__", "__or__", "__xor__", "__lshift__", "__rshift__")}
_INPLACE["__itruediv__"] = "div_"
_INPLACE["__ifloordiv__"] = "floor_divide_"
_INPLACE["__imod__"] = "remainder_"
_INPLACE["__iand__"] = "bitwise_and_"
_INPLACE["__ior__"] = "bitwise_or_"
_INPLACE["__ixor__"] = "bitwise_xor_"
_INPLACE["__ilshift__"] = "bitwise_left_shift_"
_INPLACE["__irshift__"] = "bitwise_right_shift_"

# properties recorded as ``getattr(x, name)``
_RECORDED_PROPERTIES = ("T", "mT", "H", "mH", "data")


class TracedInt(int):
    """An int read from a traced tensor's shape, or computed from such ints: it behaves as the
    int it is, and a recorded call that receives it records how it was computed."""

    def __new__(cls, value, recorder, make_node):
        self = super().__new__(cls, value)
        self._recorder = recorder
        self._make_node = make_node
        self._node = None
        return self

    def node(self):
        if self._node is None:
            self._node = self._make_node()
            self._node.meta["int_value"] = int.__int__(self)
        return self._node


def _traced_int_operator(fn, reflected=False):
    def impl(self, other):
        value = fn(other, int.__int__(self)) if reflected else fn(int.__int__(self), other)
        if not isinstance(other, int) or isinstance(other, bool) or isinstance(value, float):
            return value
        rec = self._recorder
        if rec is not _active:
            return value
        args = (other, self) if reflected else (self, other)
        return TracedInt(value, rec,
                         lambda: rec.create_node("call_function", fn, args, {}))
    return impl


for _name, _fn in (("add", operator.add), ("sub", operator.sub), ("mul", operator.mul),
                   ("floordiv", operator.floordiv), ("mod", operator.mod)):
    setattr(TracedInt, f"__{_name}__", _traced_int_operator(_fn))
    setattr(TracedInt, f"__r{_name}__", _traced_int_operator(_fn, reflected=True))
TracedInt.__neg__ = lambda self: (
    TracedInt(-int.__int__(self), self._recorder,
              lambda: self._recorder.create_node("call_function", operator.neg, (self,), {}))
    if self._recorder is _active else -int.__int__(self))
del _name, _fn


def default_is_leaf(module):
    """ember's own layers are recorded as one call_module node each; containers and user
    modules are traced through."""
    from ..nn import ModuleDict, ModuleList, Sequential
    name = type(module).__module__ or ""
    return name.startswith("ember.nn.") and not isinstance(module, (Sequential, ModuleList,
                                                                    ModuleDict))


class Recorder:
    """Records the ember calls a program makes on traced values into ``graph``.

    ``root`` is the module whose parameters and buffers the graph fetches with get_attr nodes;
    ``is_leaf(module)`` says which submodules become call_module nodes."""

    def __init__(self, root, is_leaf=default_is_leaf):
        from .. import Tensor
        self.root = root
        self.is_leaf = is_leaf
        # record the inside of a call that receives a module or a function, not the call
        self.inline_callables = False
        # ember functions recorded even when no argument is traced (ember.compile records
        # random and factory calls, so that a replay makes fresh tensors)
        self.always_recorded = frozenset()
        self.graph = Graph()
        self.depth = 0
        self.constants = {}            # qualified name -> tensor, for the get_attr nodes
        self.module_stack = []         # (qualified name, class name) of the modules entered
        self.nondeterministic = []     # nodes whose results differ from run to run
        self._values = {}              # id(tensor) -> [tensor, node or None, thunk]
        # id(tensor) -> (tensor, node): the first node bound to each tensor, kept when a dict
        # is given (an op that returns its input, or an in-place op, binds it again)
        self.producers = None
        self._module_paths = {id(m): (m, name) for name, m in root.named_modules()}
        self._constant_count = 0
        self._visited_classes = set()
        for name, t in root.named_parameters(remove_duplicate=False):
            self._attr(t, name)
        for name, t in root.named_buffers(remove_duplicate=False):
            self._attr(t, name)
        self._tensor_attrs = {}
        for mod_name, mod in root.named_modules():
            for key, value in vars(mod).items():
                if isinstance(value, Tensor):
                    qual = f"{mod_name}.{key}" if mod_name else key
                    self._tensor_attrs.setdefault(id(value), (value, qual))

    # -- values ----------------------------------------------------------------------------------
    def _attr(self, tensor, name):
        if id(tensor) in self._values:
            return

        def fetch():
            self.constants[name] = tensor
            return self.graph.create_node("get_attr", name)
        self._values[id(tensor)] = [tensor, None, fetch]

    def bind(self, value, node):
        """Make ``node`` the producer of ``value`` (a tensor, or tensors nested in tuples, lists
        and dicts: each element gets a getitem node when first used)."""
        from .. import Tensor
        if isinstance(value, Tensor):
            node.meta["tensor_meta"] = (tuple(value.shape), value.dtype)
            self._values[id(value)] = [value, node, None]
            if self.producers is not None:
                self.producers.setdefault(id(value), (value, node))
        else:
            self._bind_items(value, lambda: node)

    def _bind_items(self, container, parent):
        from .. import Tensor
        items = container.items() if isinstance(container, dict) else (
            enumerate(container) if isinstance(container, (tuple, list)) else ())
        for index, item in items:
            if isinstance(item, Tensor):
                self._values[id(item)] = [item, None, self._getitem_thunk(parent, index)]
            elif _contains_tensor(item):
                self._bind_items(item, _memoized(self._getitem_thunk(parent, index)))

    def _getitem_thunk(self, parent, index):
        return lambda: self.graph.create_node("call_function", operator.getitem,
                                              (parent(), index))

    def is_traced(self, tensor):
        """Whether ``tensor`` is an input, a value computed from one, a parameter or a buffer."""
        entry = self._values.get(id(tensor))
        return entry is not None and entry[0] is tensor

    def node_of(self, tensor):
        entry = self._values[id(tensor)]
        if entry[1] is None:
            entry[1] = entry[2]()
            entry[1].meta.setdefault("tensor_meta", (tuple(tensor.shape), tensor.dtype))
        return entry[1]

    def touches(self, args, kwargs):
        """Whether a traced value (or a TracedInt) is among ``args`` and ``kwargs``."""
        return self._touches(args) or (bool(kwargs) and self._touches(tuple(kwargs.values())))

    def _touches(self, items):
        from .. import Tensor
        for x in items:
            if isinstance(x, Tensor):
                entry = self._values.get(id(x))
                if entry is not None and entry[0] is x:
                    return True
            elif isinstance(x, TracedInt):
                if x._recorder is self:
                    return True
            elif isinstance(x, (tuple, list)):
                if x and self._touches(x):
                    return True
            elif isinstance(x, dict):
                if x and self._touches(tuple(x.values())):
                    return True
            elif isinstance(x, slice):
                if self._touches((x.start, x.stop, x.step)):
                    return True
        return False

    def create_arg(self, a):
        """``a`` as a node argument: traced values become their nodes, other tensors get_attr
        nodes of constants, TracedInts the nodes that compute them."""
        from .. import Size, Tensor
        from ..nn import Module
        if isinstance(a, Tensor):
            if self.is_traced(a):
                return self.node_of(a)
            return self._constant(a)
        if isinstance(a, TracedInt):
            return a.node() if a._recorder is self else int.__int__(a)
        if isinstance(a, Size):
            return tuple(self.create_arg(x) for x in a)
        if isinstance(a, tuple):
            items = tuple(self.create_arg(x) for x in a)
            return named_tuple_of(a, items) if hasattr(a, "_fields") else items
        if isinstance(a, list):
            return [self.create_arg(x) for x in a]
        if isinstance(a, dict):
            return {k: self.create_arg(v) for k, v in a.items()}
        if isinstance(a, slice):
            return slice(self.create_arg(a.start), self.create_arg(a.stop),
                         self.create_arg(a.step))
        if isinstance(a, Module):
            hit = self._module_paths.get(id(a))
            if hit is not None and hit[0] is a:
                return self.graph.create_node("get_attr", hit[1])
            raise RuntimeError(f"Tracer cannot record a module passed as an argument that is not "
                               f"a submodule of the traced module: {type(a).__name__}")
        return a

    def _constant(self, tensor):
        hit = self._tensor_attrs.get(id(tensor))
        if hit is not None and hit[0] is tensor:
            name = hit[1]
        else:
            while f"_tensor_constant{self._constant_count}" in self.constants:
                self._constant_count += 1
            name = f"_tensor_constant{self._constant_count}"
            self._tensor_attrs[id(tensor)] = (tensor, name)
        self._attr(tensor, name)
        return self.node_of(tensor)

    def create_node(self, kind, target, args, kwargs, name=None):
        node = self.graph.create_node(kind, target, self.create_arg(tuple(args)),
                                      self.create_arg(dict(kwargs)), name)
        if self.module_stack:
            node.meta["nn_module_stack"] = dict(self.module_stack)
        return node

    def record(self, kind, target, args, kwargs, result):
        """Add the node of a call that returned ``result`` and bind the result to it."""
        node = self.create_node(kind, target, args, kwargs)
        self.bind(result, node)
        if _is_nondeterministic(kind, target, args, kwargs):
            self.nondeterministic.append(node)
        return node

    def placeholder(self, name, value):
        node = self.graph.create_node("placeholder", name)
        self.bind(value, node)
        return node

    def module_path(self, module):
        hit = self._module_paths.get(id(module))
        return hit[1] if hit is not None and hit[0] is module else None

    # -- running -------------------------------------------------------------------------------
    @contextlib.contextmanager
    def active(self):
        """Install the recording wrappers for the duration of the block."""
        global _active
        if _active is not None:
            raise RuntimeError("ember.jit.trace cannot be called while another trace is running")
        with _Patcher() as patcher:
            self._patcher = patcher
            self._ember_functions = ember_functions()
            self._install(patcher)
            _active = self
            try:
                yield self
            finally:
                _active = None
                self._patcher = None

    def patch_globals(self, frame_dict):
        """Record the ember functions that the module owning ``frame_dict`` imported by name."""
        patcher = self._patcher
        if not patcher.visit_once(frame_dict):
            return
        for name, value in list(frame_dict.items()):
            if name.startswith("__") or not callable(value):
                continue
            fn = self._ember_functions.get(id(value))
            if fn is value:
                patcher.patch(frame_dict, name, _recording_function(value, namespace_of(value)))

    def patch_module_attributes(self, module):
        """Record the ember functions a traced-through module keeps as attributes
        (``self.activation = F.relu``, ``_fn = staticmethod(F.relu)``)."""
        patcher = self._patcher
        if not patcher.visit_once(module.__dict__):
            return
        for name, value in list(vars(module).items()):
            if callable(value) and self._ember_functions.get(id(value)) is value:
                patcher.patch(module.__dict__, name, _recording_function(value,
                                                                          namespace_of(value)))
        for cls in type(module).__mro__:
            if cls in self._visited_classes:
                continue
            self._visited_classes.add(cls)
            for name, value in list(vars(cls).items()):
                fn = value.__func__ if isinstance(value, staticmethod) else value
                if callable(fn) and self._ember_functions.get(id(fn)) is fn:
                    patcher.patch_method(cls, name, staticmethod(_recording_function(
                        fn, namespace_of(fn))) if isinstance(value, staticmethod) else
                        _recording_function(fn, namespace_of(fn)))

    def _install(self, patcher):
        from .. import Tensor
        from .._blocked_tensor import BlockedTensor
        from ..ops._compiled_methods import as_python
        from ..nn import Module
        for ns_name, module in _namespaces():
            d = module.__dict__
            for key, value in list(d.items()):
                if key.startswith("__") or key in _NEVER_WRAP or not _is_ember_function(value):
                    continue
                if ns_name == "ember" and key == "tensor":
                    patcher.patch(d, key, _constant_tensor_function(value))
                    continue
                patcher.patch(d, key, _recording_function(value, ns_name))
        # (a tensor still in oneDNN's layout answers its metadata itself: patched alike)
        for cls in (Tensor, BlockedTensor):
            for key, value in list(vars(cls).items()):
                if cls is Tensor:
                    value = as_python(key, value)
                if isinstance(value, property):
                    if key == "shape":
                        patcher.patch_method(cls, key, property(_shape_getter(value.fget)))
                    elif key in _RECORDED_PROPERTIES:
                        getter = _property_getter(key, value.fget)
                        patcher.patch_method(cls, key, property(getter, value.fset))
                    continue
                if not isinstance(value, types.FunctionType):
                    continue
                if key in _CONVERSION_WARNINGS:
                    warning = _conversion_warning(_CONVERSION_WARNINGS[key])
                    patcher.patch_method(cls, key, _warning_method(value, warning))
                elif key == "__iter__":
                    patcher.patch_method(cls, key, _warning_method(value, _ITERATION_WARNING))
                elif key == "__len__":
                    patcher.patch_method(cls, key, _warning_method(value, _LEN_WARNING))
                elif key == "size":
                    patcher.patch_method(cls, key, _size_method(value))
                elif key == "__setitem__":
                    patcher.patch_method(cls, key, _setitem_method(value))
                elif key in _NOT_RECORDED or (key.startswith("_") and not key.startswith("__")):
                    continue
                elif key in _OPERATORS or key in _REFLECTED or key in _INPLACE or not key.startswith("_"):
                    patcher.patch_method(cls, key, _recording_method(key, value))
        patcher.patch_method(Module, "__call__", _module_call(Module.__call__))


def _has_tensors(module):
    return (next(module.parameters(), None) is not None
            or next(module.buffers(), None) is not None)


def _memoized(thunk):
    cell = []

    def once():
        if not cell:
            cell.append(thunk())
        return cell[0]
    return once


def _contains_tensor(value):
    from .. import Tensor
    if isinstance(value, Tensor):
        return True
    if isinstance(value, (tuple, list)):
        return any(_contains_tensor(v) for v in value)
    if isinstance(value, dict):
        return any(_contains_tensor(v) for v in value.values())
    return False


_RANDOM_FUNCTIONS = frozenset("""
    rand rand_like randn randn_like randint randint_like randperm bernoulli multinomial normal
    poisson dropout dropout1d dropout2d dropout3d alpha_dropout feature_alpha_dropout rrelu
    uniform_ normal_ bernoulli_ random_ exponential_ geometric_ cauchy_ log_normal_
""".split())


def _is_nondeterministic(kind, target, args, kwargs):
    name = target if isinstance(target, str) else getattr(target, "__name__", "")
    if name not in _RANDOM_FUNCTIONS:
        return False
    if "dropout" in name or name == "rrelu":
        training = kwargs.get("training", args[2] if len(args) > 2 else True)
        return bool(training)
    return True


def _passes_callable(args, kwargs):
    """Whether a module or a Python function is among the arguments (a loss's
    ``distance_function``)."""
    from ..nn import Module
    kinds = (Module, types.FunctionType, types.MethodType, functools.partial)
    return any(isinstance(x, kinds) for x in args) or any(
        isinstance(x, kinds) for x in kwargs.values())


def _run_unrecorded(rec, fn, args, kwargs):
    rec.depth += 1
    try:
        # the op computes with plain ints (a TracedInt is no scalar type of ember's promotion)
        args = tuple(int.__int__(a) if isinstance(a, TracedInt) else a for a in args)
        return fn(*args, **kwargs)
    finally:
        rec.depth -= 1


_function_wrappers = {}


def _recording_function(fn, namespace):
    """The wrapper of an ember function: computes it, and records it when an argument is a
    traced value."""
    key = (id(fn), namespace)
    hit = _function_wrappers.get(key)
    if hit is not None and hit.__fx_original__ is fn:
        return hit

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        rec = _active
        if rec is None or rec.depth or not (rec.touches(args, kwargs)
                                            or fn in rec.always_recorded):
            return fn(*args, **kwargs)
        if rec.inline_callables and _passes_callable(args, kwargs):
            return fn(*args, **kwargs)
        result = _run_unrecorded(rec, fn, args, kwargs)
        if _contains_tensor(result):
            rec.record("call_function", fn, args, kwargs, result)
        return result

    wrapper.__fx_original__ = fn
    _function_wrappers[key] = wrapper
    return wrapper


_TENSOR_CONSTANT_WARNING = (
    "ember.tensor results are registered as constants in the trace. You can safely ignore this "
    "warning if you use this function to create tensors out of constant variables that would be "
    "the same every time you call this function. In any other case, this might cause the trace "
    "to be incorrect.")


def _constant_tensor_function(fn):
    """``ember.tensor`` during a trace: its result is a constant of the graph, as torch warns."""
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        rec = _active
        if rec is not None and not rec.depth:
            warnings.warn(_TENSOR_CONSTANT_WARNING, TracerWarning, stacklevel=2)
        return fn(*args, **kwargs)
    wrapper.__fx_original__ = fn
    return wrapper


def _recording_method(name, orig):
    if name in _OPERATORS:
        kind, target = "call_function", _OPERATORS[name]
    elif name in _REFLECTED:
        kind, target = "call_function", _REFLECTED[name]
    elif name in _INPLACE:
        kind, target = "call_method", _INPLACE[name]
    else:
        kind, target = "call_method", name
    reflected = name in _REFLECTED

    @functools.wraps(orig)
    def wrapper(*args, **kwargs):
        rec = _active
        if rec is None or rec.depth or not rec.touches(args, kwargs):
            return orig(*args, **kwargs)
        result = _run_unrecorded(rec, orig, args, kwargs)
        if result is NotImplemented or not _contains_tensor(result):
            return result
        rec.record(kind, target, (args[1], args[0]) if reflected else args, kwargs, result)
        return result

    wrapper.__fx_original__ = orig
    return wrapper


def _setitem_method(orig):
    @functools.wraps(orig)
    def wrapper(self, index, value):
        rec = _active
        if rec is None or rec.depth or not rec.touches((self, index, value), {}):
            return orig(self, index, value)
        _run_unrecorded(rec, orig, (self, index, value), {})
        rec.record("call_function", setitem, (self, index, value), {}, self)
    return wrapper


def _warning_method(orig, message):
    @functools.wraps(orig)
    def wrapper(self, *args, **kwargs):
        rec = _active
        if rec is None or rec.depth or not rec.is_traced(self):
            return orig(self, *args, **kwargs)
        warnings.warn(message, TracerWarning, stacklevel=2)
        return _run_unrecorded(rec, orig, (self,) + args, kwargs)
    return wrapper


def _size_method(orig):
    @functools.wraps(orig)
    def size(self, dim=None):
        out = orig(self) if dim is None else orig(self, dim)
        rec = _active
        if rec is None or rec.depth or not rec.is_traced(self) or isinstance(dim, TracedInt):
            return out
        if dim is None:
            return _traced_shape(rec, self, out)
        return TracedInt(out, rec, lambda: rec.create_node("call_method", "size", (self, dim), {}))
    return size


def _traced_shape(rec, tensor, shape):
    from .. import Size

    def dim_node(i):
        return lambda: rec.create_node("call_method", "size", (tensor, i), {})
    return Size(TracedInt(v, rec, dim_node(i)) for i, v in enumerate(shape))


def _shape_getter(orig):
    def shape(self):
        out = orig(self)
        rec = _active
        if rec is None or rec.depth or not rec.is_traced(self):
            return out
        return _traced_shape(rec, self, out)
    return shape


def _property_getter(name, orig):
    def getter(self):
        rec = _active
        if rec is None or rec.depth or not rec.is_traced(self):
            return orig(self)
        result = _run_unrecorded(rec, orig, (self,), {})
        if name == "data":
            rec.record("call_method", "detach", (self,), {}, result)
        else:
            rec.record("call_function", getattr, (self, name), {}, result)
        return result
    return getter


def _module_call(orig_call):
    def module_call(module, *args, **kwargs):
        rec = _active
        if rec is None or rec.depth:
            return orig_call(module, *args, **kwargs)
        path = rec.module_path(module)
        rec.module_stack.append((path if path is not None else "", type(module).__name__))
        try:
            if path is not None and rec.is_leaf(module):
                result = _run_unrecorded(rec, orig_call, (module,) + args, kwargs)
                # a layer with parameters depends on them even when its inputs are constants
                if (rec.touches(args, kwargs) or _has_tensors(module)) and \
                        _contains_tensor(result):
                    rec.record("call_module", path, args, kwargs, result)
                return result
            forward = getattr(type(module), "forward", None)
            globals_ = getattr(forward, "__globals__", None)
            if globals_ is not None:
                rec.patch_globals(globals_)
            rec.patch_module_attributes(module)
            return orig_call(module, *args, **kwargs)
        finally:
            rec.module_stack.pop()
    return module_call
