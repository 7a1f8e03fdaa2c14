"""``Proxy``: the stand-in for a value during symbolic tracing. Every operation on a Proxy
(an operator, a method call, an attribute, a call of an ember function) records a Node in the
tracer's graph and returns a new Proxy for its result."""
import collections
import copy
import dis
import inspect
import operator
import os
import traceback

from ._codegen import magic_methods, reflectable_magic_methods
from .graph import Graph
from .node import Node, named_tuple_of

__all__ = ["TraceError", "TracerBase", "GraphAppendingTracer", "Proxy", "Attribute"]

_FX_DIR = os.path.dirname(os.path.abspath(__file__))


class TraceError(ValueError):
    """Raised when a traced program uses a traced value in a way a graph cannot record
    (control flow on it, iterating it)."""


def _user_frame():
    """The innermost frame outside ember.fx: the user's code that did the operation."""
    frame = inspect.currentframe()
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(_FX_DIR):
        frame = frame.f_back
    return frame


def _where():
    frame = _user_frame()
    if frame is None:
        return ""
    info = inspect.getframeinfo(frame, context=1)
    line = (info.code_context or [""])[0].strip()
    where = f"\n  File \"{info.filename}\", line {info.lineno}, in {info.function}"
    return where + (f"\n    {line}" if line else "")


def _user_stack_trace():
    frames = [f for f in traceback.extract_stack()
              if not os.path.abspath(f.filename).startswith(_FX_DIR)]
    return "".join(traceback.format_list(frames[-8:]))


_BASE_TYPES = None


def _base_types():
    global _BASE_TYPES
    if _BASE_TYPES is None:
        from .. import Tensor, device, dtype
        from .._layout import layout
        from .._memory_format import memory_format
        _BASE_TYPES = (str, int, float, bool, complex, type(None), type(...), dtype, device,
                       Tensor, layout, memory_format, range)
    return _BASE_TYPES


class TracerBase:
    """The part of a tracer that records nodes: ``create_proxy``, ``create_node``,
    ``create_arg``; ``Tracer`` adds running a module."""

    graph: Graph
    record_stack_traces = False
    check_mutable_operations = False
    trace_asserts = False
    proxy_buffer_attributes = False
    traced_func_name = "forward"

    def create_node(self, kind, target, args, kwargs, name=None, type_expr=None):
        """Insert a node into the graph; a hook for tracers that annotate nodes."""
        node = self.graph.create_node(kind, target, args, kwargs, name, type_expr)
        module_stack = getattr(self, "module_stack", None)
        if module_stack:
            node.meta["nn_module_stack"] = copy.copy(module_stack)
        return node

    def proxy(self, node):
        return Proxy(node, self)

    def create_proxy(self, kind, target, args, kwargs, name=None, type_expr=None,
                     proxy_factory_fn=None):
        """Create a Node from ``kind``, ``target``, ``args`` and ``kwargs`` (turning Proxies and
        constants in them into arguments with ``create_arg``) and return a Proxy for it."""
        args_ = self.create_arg(args)
        kwargs_ = self.create_arg(kwargs)
        if not isinstance(args_, tuple) or not isinstance(kwargs_, dict):
            raise TypeError("create_proxy: args must be a tuple and kwargs a dict")
        node = self.create_node(kind, target, args_, kwargs_, name, type_expr)
        proxy = self.proxy(node) if proxy_factory_fn is None else proxy_factory_fn(node)
        if self.record_stack_traces and not proxy.node.stack_trace:
            proxy.node.stack_trace = _user_stack_trace()
        return proxy

    def create_arg(self, a):
        """Turn ``a`` into a value that can be an argument of a Node: Proxies become their
        nodes, containers are converted element by element, constants stay as they are."""
        if hasattr(a, "__fx_create_arg__"):
            return a.__fx_create_arg__(self)
        if isinstance(a, Proxy):
            return a.node
        if isinstance(a, Node):
            return a
        if isinstance(a, tuple):
            args = tuple(self.create_arg(elem) for elem in a)
            if hasattr(a, "_fields"):
                return named_tuple_of(a, args)
            return args if type(a) is tuple else type(a)(args)
        if isinstance(a, list):
            return [self.create_arg(elem) for elem in a]
        if isinstance(a, dict):
            r = {}
            for k, v in a.items():
                k = self.create_arg(k)
                if isinstance(k, Node):
                    raise RuntimeError(f"Keys for dictionaries used as an argument cannot contain a "
                                       f"Node. Got key: {k}")
                r[k] = self.create_arg(v)
            return r
        if isinstance(a, slice):
            return slice(self.create_arg(a.start), self.create_arg(a.stop), self.create_arg(a.step))
        if isinstance(a, _base_types()):
            return a
        import enum
        if isinstance(a, enum.Enum):
            return a
        if callable(a):
            return a
        raise NotImplementedError(f"argument of type: {type(a)}")

    def to_bool(self, obj):
        """Called when a Proxy is converted to bool (``if proxy:``): raises TraceError, since the
        value is not known while tracing."""
        raise TraceError("symbolically traced variables cannot be used as inputs to control flow"
                         + _where())

    def iter(self, obj):
        """Called when a Proxy is iterated: raises TraceError."""
        raise TraceError("Proxy object cannot be iterated. This can be attempted when the Proxy is "
                         "used in a loop or as a *args or **kwargs function argument. See the "
                         "ember.fx docs for a more detailed explanation of what types of control "
                         "flow can be traced, and check out the Proxy docstring for help "
                         "troubleshooting Proxy iteration errors" + _where())

    def keys(self, obj):
        """Called for ``proxy.keys()`` (as in ``**proxy``): records the call."""
        return Attribute(obj, "keys")()


class GraphAppendingTracer(TracerBase):
    """A tracer that appends nodes to an existing graph (for Proxies made by hand)."""

    def __init__(self, graph):
        super().__init__()
        self.graph = graph
        self.module_stack = collections.OrderedDict()
        self.node_name_to_scope = {}


class Proxy:
    """The object that flows through a program during symbolic tracing, standing for a value of
    the traced graph (``proxy.node``). Operators, method calls, attribute accesses and calls of
    ember functions on a Proxy record nodes. A Proxy cannot decide Python control flow: ``if``
    on it, ``bool()``, ``len()`` or iterating it (except unpacking, ``a, b = proxy``) raise."""

    def __init__(self, node, tracer=None):
        if tracer is None:
            tracer = GraphAppendingTracer(node.graph)
        self.tracer = tracer
        self.node = node

    def __repr__(self):
        return f"Proxy({self.node.name})"

    def __getattr__(self, k):
        if k.startswith("__") and k.endswith("__"):
            raise AttributeError(k)
        return Attribute(self, k)

    def __getstate__(self):
        return self.__dict__

    def __setstate__(self, d):
        self.__dict__ = d

    def __deepcopy__(self, memo):
        new_dict = {}
        for k, v in self.__dict__.items():
            try:
                new_obj = copy.deepcopy(v, memo)
            except Exception:
                new_obj = v
            new_dict[k] = new_obj
        new_proxy = Proxy.__new__(Proxy)
        new_proxy.__dict__ = new_dict
        return new_proxy

    def __call__(self, *args, **kwargs):
        return self.tracer.create_proxy("call_method", "__call__", (self,) + args, kwargs)

    def __iter__(self):
        frame = inspect.currentframe().f_back
        for inst in dis.get_instructions(frame.f_code):
            if inst.offset == frame.f_lasti:
                if inst.opname == "UNPACK_SEQUENCE":
                    return (self[i] for i in range(inst.argval))
                break
        return self.tracer.iter(self)

    def __abs__(self):
        return self.tracer.create_proxy("call_function", operator.abs, (self,), {})

    def __bool__(self):
        return self.tracer.to_bool(self)

    def keys(self):
        return self.tracer.keys(self)

    def __len__(self):
        raise RuntimeError("'len' is not supported in symbolic tracing by default. If you want this "
                           "call to be recorded, please call ember.fx.wrap('len') at module scope"
                           + _where())

    __hash__ = object.__hash__


class Attribute(Proxy):
    """``proxy.name``: a call_method node when called, else a ``getattr`` call_function node,
    made when first used."""

    def __init__(self, root, attr):
        self.root = root
        self.attr = attr
        self.tracer = root.tracer
        self._node = None

    @property
    def node(self):
        if self._node is None:
            self._node = self.tracer.create_proxy("call_function", getattr,
                                                  (self.root, self.attr), {}).node
        return self._node

    def __call__(self, *args, **kwargs):
        return self.tracer.create_proxy("call_method", self.attr, (self.root,) + args, kwargs)


def _find_proxy(*objects):
    """The first Proxy inside ``objects`` (nests of tuples, lists, dicts, slices), or None."""
    for x in objects:
        if isinstance(x, Proxy):
            return x
        if isinstance(x, (tuple, list)):
            if x:
                p = _find_proxy(*x)
                if p is not None:
                    return p
        elif isinstance(x, dict):
            if x:
                p = _find_proxy(*x.values())
                if p is not None:
                    return p
        elif isinstance(x, slice):
            p = _find_proxy(x.start, x.stop, x.step)
            if p is not None:
                return p
    return None


def _define_magic(method):
    target = getattr(operator, method, None)
    if target is None:       # 'div' has no operator function in Python 3
        return

    def impl(*args, **kwargs):
        return args[0].tracer.create_proxy("call_function", target, args, kwargs)

    name = f"__{method.strip('_')}__"
    impl.__name__ = impl.__qualname__ = name
    setattr(Proxy, name, impl)


def _define_reflectable(method):
    target = getattr(operator, method, None)
    if target is None:
        return
    name = f"__r{method.strip('_')}__"

    def impl(self, rhs):
        return self.tracer.create_proxy("call_function", target, (rhs, self), {})

    impl.__name__ = impl.__qualname__ = name
    setattr(Proxy, name, impl)


for _method in magic_methods:
    _define_magic(_method)
for _method in reflectable_magic_methods:
    if _method != "getitem":
        _define_reflectable(_method)
del _method
