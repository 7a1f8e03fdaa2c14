"""``Tracer`` and ``symbolic_trace``: run a Module's forward on Proxies and record a Graph."""
import builtins
import collections
import inspect
import math
import types
import warnings
from itertools import chain

from ._patching import (_Patcher, create_wrapped_func, ember_function_wrapper, ember_functions,
                        ember_patches, namespace_of)
from .graph import Graph
from .node import has_side_effect
from .proxy import TracerBase

__all__ = ["Tracer", "symbolic_trace", "wrap", "PH", "PHBase", "is_fx_tracing"]

HAS_VARSTUFF = inspect.CO_VARARGS | inspect.CO_VARKEYWORDS

_is_fx_tracing_flag = False

# (id of a module's globals, name) -> that globals dict, for the functions given to ``wrap``
_wrapped_fns_to_patch = {}


def is_fx_tracing():
    """True while ``symbolic_trace`` (a Tracer) is running a program."""
    return _is_fx_tracing_flag


class PHBase:
    """The object ``concrete_args`` uses to mark a value that stays an input (``PH``)."""

    def __repr__(self):
        return "PH"


PH = PHBase()


@has_side_effect
def _assert_is_none(value, msg):
    assert value is None, msg


class Tracer(TracerBase):
    """``Tracer`` implements the symbolic tracing behind ``symbolic_trace``: ``trace`` runs a
    module's ``forward`` on Proxies and returns the Graph of what it did. Subclass it to change
    what is recorded: ``is_leaf_module`` (which modules become call_module nodes rather than
    being traced through), ``create_proxy``/``create_node``, ``create_arg``, ``getattr``,
    ``call_module``.

    ``autowrap_modules``: modules whose functions are recorded as call_function nodes when the
    traced code calls them on Proxies (``math`` by default); ``autowrap_functions``: single
    functions recorded that way. ember's own functions always are."""

    def __init__(self, autowrap_modules=(math,), autowrap_functions=(), param_shapes_constant=False):
        super().__init__()
        self._autowrap_function_ids = {
            id(value)
            for name, value in chain.from_iterable(m.__dict__.items() for m in autowrap_modules)
            if not name.startswith("_") and callable(value)}
        self._autowrap_function_ids.update(id(f) for f in autowrap_functions)
        self._autowrap_modules = list(autowrap_modules)
        self.param_shapes_constant = param_shapes_constant
        self.submodule_paths = None
        self.root_module_name = ""
        self.module_stack = collections.OrderedDict()
        self.node_name_to_scope = {}
        self._ember_functions = {}

    # -- arguments -----------------------------------------------------------------------------
    def create_arg(self, a):
        """Like ``TracerBase.create_arg``, and: a Parameter or buffer of the root becomes a
        get_attr node of its qualified name, a submodule a get_attr of its path, and any other
        tensor a get_attr of a constant attribute (``_tensor_constant0``) added to the root."""
        from .. import Tensor
        from ..nn import Module, Parameter
        if isinstance(a, Parameter):
            for n_, p_ in self.root.named_parameters():
                if a is p_:
                    return self.create_node("get_attr", n_, (), {})
            raise NameError("parameter is not a member of this module")
        if isinstance(a, Module):
            for n_, p_ in self.root.named_modules():
                if a is p_:
                    return self.create_node("get_attr", n_, (), {})
            raise NameError("module is not installed as a submodule")
        if isinstance(a, Tensor):
            for n_, p_ in self.root.named_buffers():
                if a is p_:
                    return self.create_node("get_attr", n_, (), {})
            hit = self.tensor_attrs.get(id(a))
            if hit is not None and hit[0] is a:
                qualname = hit[1]
            else:
                i = 0
                while True:
                    qualname = f"_tensor_constant{i}"
                    if not hasattr(self.root, qualname):
                        break
                    i += 1
                self.tensor_attrs[id(a)] = (a, qualname)
                setattr(self.root, qualname, a)
            return self.create_node("get_attr", qualname, (), {})
        return super().create_arg(a)

    # -- modules -------------------------------------------------------------------------------
    def is_leaf_module(self, m, module_qualified_name):
        """Whether ``m`` is recorded as one call_module node (True) or traced through (False).
        By default ember's own layers (``ember.nn``, except ``Sequential``) are leaves."""
        from ..nn import Sequential
        module = type(m).__module__ or ""
        return module.startswith("ember.nn") and not isinstance(m, Sequential)

    def path_of_module(self, mod):
        """The qualified name of ``mod`` in the root module (``'layer1.0.conv1'``)."""
        if self.submodule_paths:
            hit = self.submodule_paths.get(id(mod))
            if hit is None or hit[0] is not mod:
                raise NameError("module is not installed as a submodule")
            return hit[1]
        for n, p in self.root.named_modules():
            if mod is p:
                return n
        raise NameError("module is not installed as a submodule")

    def call_module(self, m, forward, args, kwargs):
        """Called for each submodule call during tracing: a leaf module becomes a call_module
        node; any other is traced through by calling ``forward``."""
        module_qualified_name = self.path_of_module(m)
        key = module_qualified_name
        pushed = key not in self.module_stack
        if pushed:
            self.module_stack[key] = (module_qualified_name, type(m))
        try:
            if not self.is_leaf_module(m, module_qualified_name):
                return forward(*args, **kwargs)
            return self.create_proxy("call_module", module_qualified_name, args, kwargs)
        finally:
            if pushed:
                self.module_stack.pop(key, None)

    def getattr(self, attr, attr_val, parameter_proxy_cache):
        """Called when the traced code reads an attribute of a module: a Parameter of the root
        becomes (once) a get_attr node's Proxy; anything else is returned as it is."""
        from .. import Tensor
        from ..nn import Parameter

        def maybe_get_proxy_for_attr(attr_val, collection_to_search):
            for n, p in collection_to_search:
                if attr_val is p:
                    if n not in parameter_proxy_cache:
                        parameter_proxy_cache[n] = self.create_proxy("get_attr", n, (), {})
                    return parameter_proxy_cache[n]
            return None

        if isinstance(attr_val, Parameter):
            proxy = maybe_get_proxy_for_attr(attr_val, self.root.named_parameters())
            if proxy is not None:
                return proxy
        if self.proxy_buffer_attributes and isinstance(attr_val, Tensor):
            proxy = maybe_get_proxy_for_attr(attr_val, self.root.named_buffers())
            if proxy is not None:
                return proxy
        return attr_val

    # -- inputs --------------------------------------------------------------------------------
    def create_args_for_root(self, root_fn, is_module, concrete_args=None):
        """Make the placeholders of ``root_fn``'s parameters (``*args`` and ``**kwargs`` become
        one placeholder each); returns the function to call and its arguments."""
        fn_for_analysis = inspect.unwrap(root_fn)
        co = fn_for_analysis.__code__
        total_args = co.co_argcount + co.co_kwonlyargcount
        names_iter = iter(co.co_varnames)
        args = []
        skip_arg_idx = 0
        if is_module:
            if total_args == 0:
                raise RuntimeError("``self`` argument cannot be part of *args expansion!")
            skip_arg_idx = 1
            next(names_iter)
            args.append(self.root)
        sig = inspect.signature(fn_for_analysis)
        arg_names = [next(names_iter) for _ in range(skip_arg_idx, total_args)]
        if isinstance(concrete_args, tuple):
            if len(arg_names) != len(concrete_args):
                raise RuntimeError(f"Tracing expected {len(arg_names)} arguments but got "
                                   f"{len(concrete_args)} concrete arguments")
            concrete_args = dict(zip(arg_names, concrete_args))
        if concrete_args is not None:
            unknown = [k for k in concrete_args if k not in sig.parameters]
            if unknown:
                raise RuntimeError(f"concrete_args names {unknown[0]!r}, which is not a parameter "
                                   f"of {fn_for_analysis.__qualname__}{sig}")
        args.extend(self._proxy_placeholder(name, concrete_args, sig, fn_for_analysis)
                    for name in arg_names)
        if co.co_kwonlyargcount > 0 or co.co_flags & HAS_VARSTUFF:
            if co.co_flags & inspect.CO_VARARGS:
                args.append(self._proxy_placeholder("*" + next(names_iter), concrete_args, sig,
                                                    fn_for_analysis))
            if co.co_flags & inspect.CO_VARKEYWORDS:
                args.append(self._proxy_placeholder("**" + next(names_iter), concrete_args, sig,
                                                    fn_for_analysis))
            root_fn = _patch_function(root_fn, len(args))
        return root_fn, args

    def _proxy_placeholder(self, name, concrete_args, sig, fn_for_analysis):
        if concrete_args is not None and name in concrete_args:
            cnt = 0

            def replace_ph(x):
                nonlocal cnt
                cnt += 1
                param = sig.parameters[name]
                default = () if param.default is inspect.Parameter.empty else (param.default,)
                out = self.create_proxy("placeholder", f"{name}_{cnt}", default, {})
                if isinstance(x, PHBase):
                    return out
                if type(x) in (bool, int, float, str, complex):
                    import ember
                    self.create_proxy("call_function", ember._assert,
                                      (out == x, f"{name} has been specialized to have value {x} "
                                                 f"but got another value"), {})
                elif x is None:
                    self.create_proxy("call_function", _assert_is_none,
                                      (out, f"{name} has been specialized to have value None but "
                                            f"got another value"), {})
                else:
                    warnings.warn(f"Was not able to add assertion to guarantee correct input "
                                  f"{name} to specialized function. It is up to the user to make "
                                  f"sure that your inputs match the inputs you specialized the "
                                  f"function with.", stacklevel=2)
                return x

            return _tree_map(replace_ph, concrete_args[name])
        if name[0] == "*":
            default = ()
        else:
            param = sig.parameters[name]
            default = () if param.default is inspect.Parameter.empty else (param.default,)
        return self.create_proxy("placeholder", name, default, {},
                                 type_expr=fn_for_analysis.__annotations__.get(name, None))

    # -- tracing -------------------------------------------------------------------------------
    def _autowrap_check(self, patcher, frame_dict):
        """Patch the functions in ``frame_dict`` (a module's globals) that the trace records:
        ember functions imported by name and the autowrap functions."""
        if not patcher.visit_once(frame_dict):
            return
        for name, value in list(frame_dict.items()):
            if name.startswith("_") or not callable(value):
                continue
            fn = self._ember_functions.get(id(value))
            if fn is value:
                patcher.patch(frame_dict, name, ember_function_wrapper(value, namespace_of(value)))
            elif id(value) in self._autowrap_function_ids:
                patcher.patch(frame_dict, name, create_wrapped_func(value))

    def trace(self, root, concrete_args=None):
        """Trace ``root`` (a Module or a function) and return the Graph of its forward.
        ``concrete_args`` fixes some inputs to values (``PH`` keeps one an input); control flow
        that depends on them is then specialized."""
        global _is_fx_tracing_flag
        from ..nn import Module
        old_flag = _is_fx_tracing_flag
        _is_fx_tracing_flag = True
        try:
            if isinstance(root, Module):
                self.root = root
                fn = getattr(type(root), self.traced_func_name)
                self.root_module_name = type(root).__name__
                self.submodule_paths = {id(mod): (mod, name) for name, mod in root.named_modules()}
            elif callable(root):
                self.root = Module()
                fn = root
            else:
                raise TypeError(f"symbolic_trace expects an ember.nn.Module or a function, got "
                                f"{type(root).__name__}")
            self.graph = Graph(tracer_cls=getattr(self, "__class__", None))
            self.tensor_attrs = {}
            self._collect_tensor_attrs(self.root, [])
            fn_globals = getattr(fn, "__globals__", {})
            self._ember_functions = ember_functions()
            fn, args = self.create_args_for_root(fn, isinstance(root, Module), concrete_args)
            parameter_proxy_cache = {}
            orig_getattr = Module.__getattr__
            orig_call = Module.__call__
            tracer = self

            def module_getattr_wrapper(mod, attr):
                attr_val = orig_getattr(mod, attr)
                return tracer.getattr(attr, attr_val, parameter_proxy_cache)

            with _Patcher() as patcher:
                def module_call_wrapper(mod, *args, **kwargs):
                    def forward(*args, **kwargs):
                        return orig_call(mod, *args, **kwargs)
                    globals_ = getattr(getattr(type(mod), "forward", None), "__globals__", None)
                    if globals_ is not None:
                        tracer._autowrap_check(patcher, globals_)
                    return tracer.call_module(mod, forward, args, kwargs)

                patcher.patch_method(Module, "__getattr__", module_getattr_wrapper)
                patcher.patch_method(Module, "__call__", module_call_wrapper)
                ember_patches(patcher)
                _patch_wrapped_functions(patcher)
                self._autowrap_check(patcher, fn_globals)
                for module in self._autowrap_modules:
                    self._autowrap_check(patcher, module.__dict__)
                result = fn(*args)
                self.create_node("output", "output", (self.create_arg(result),), {},
                                 type_expr=getattr(fn, "__annotations__", {}).get("return", None))
            self.submodule_paths = None
        finally:
            _is_fx_tracing_flag = old_flag
        return self.graph

    def _collect_tensor_attrs(self, m, prefix_atoms):
        from .. import Tensor
        for k, v in m.__dict__.items():
            if isinstance(v, Tensor):
                self.tensor_attrs[id(v)] = (v, ".".join(prefix_atoms + [k]))
        for k, v in m.named_children():
            self._collect_tensor_attrs(v, prefix_atoms + [k])

    def __getstate__(self):
        d = dict(self.__dict__)
        d.pop("_ember_functions", None)
        return d


def _tree_map(fn, x):
    if isinstance(x, tuple):
        return type(x)(*(_tree_map(fn, e) for e in x)) if hasattr(x, "_fields") else \
            tuple(_tree_map(fn, e) for e in x)
    if isinstance(x, list):
        return [_tree_map(fn, e) for e in x]
    if isinstance(x, dict):
        return {k: _tree_map(fn, v) for k, v in x.items()}
    return fn(x)


def _patch_function(fn, nargs):
    """A copy of ``fn`` that takes its keyword-only, ``*args`` and ``**kwargs`` parameters as
    plain positional ones (each gets one Proxy)."""
    co = fn.__code__
    new_code = co.replace(co_flags=co.co_flags & ~HAS_VARSTUFF, co_argcount=nargs,
                          co_kwonlyargcount=0)
    return types.FunctionType(new_code, fn.__globals__, fn.__name__, fn.__defaults__,
                              fn.__closure__)


def _patch_wrapped_functions(patcher):
    for (_, name), frame_dict in list(_wrapped_fns_to_patch.items()):
        if name not in frame_dict and hasattr(builtins, name):
            orig_fn = getattr(builtins, name)
        else:
            orig_fn = frame_dict[name]
        patcher.patch(frame_dict, name, create_wrapped_func(orig_fn))


def wrap(fn_or_name):
    """Called at the top level of a module, makes the module's function ``fn_or_name`` (the
    function or its name; also a builtin such as ``'len'``) a leaf of symbolic tracing: called
    on Proxies it is recorded as one call_function node instead of being traced through.
    Returns ``fn_or_name``, so it can be used as a decorator."""
    if not callable(fn_or_name) and not isinstance(fn_or_name, str):
        raise RuntimeError("Unsupported type for global function! Must be either a callable or "
                           "string name")
    if callable(fn_or_name):
        if not hasattr(fn_or_name, "__code__"):
            raise RuntimeError("fn_or_name must be a global function or string name")
        fn_name = fn_or_name.__code__.co_name
    else:
        fn_name = fn_or_name
    frame = inspect.currentframe().f_back
    try:
        if frame.f_code.co_name != "<module>":
            raise NotImplementedError("wrap must be called at the top level of a module")
        _wrapped_fns_to_patch[(id(frame.f_globals), fn_name)] = frame.f_globals
    finally:
        del frame
    return fn_or_name


def symbolic_trace(root, concrete_args=None):
    """Symbolic tracing API. Given an ``ember.nn.Module`` or a function ``root``, returns a
    ``GraphModule`` built from the operations recorded while tracing it. ``concrete_args`` fixes
    some inputs (partial specialization), e.g. to remove control flow on a flag::

        def f(a, b):
            if b == True:
                return a
            return a * 2
        gm = ember.fx.symbolic_trace(f, concrete_args={"b": False})
    """
    from ..nn import Module
    from .graph_module import GraphModule
    tracer = Tracer()
    graph = tracer.trace(root, concrete_args)
    name = root.__class__.__name__ if isinstance(root, Module) else root.__name__
    return GraphModule(tracer.root, graph, name)
