"""How vmap reaches ember's operations: the one place where calls are intercepted.

ember has no dispatcher: its ops are Python functions on Tensors. While a ``vmap`` runs, the
callables ember.fx's tracer patches (``fx._patching.patch_ember_callables``: the functions of
``ember``, ``ember.nn.functional``, ``ember.special``, ``ember.linalg``, ``ember.fft``, the ember
functions imported by name into the mapped function's module, and ``Tensor``'s methods) are
replaced by wrappers that call ``dispatch``; BatchedTensor's own methods and operators call it
too. ``dispatch`` finds the highest vmap level among the arguments and runs the operation's
batching rule at that level (``register``), or ``_loop_fallback`` (one call per sample, then a
stack) for an operation without one. Outside vmap nothing is patched, so eager calls run the
original functions with no added work.

A ``__torch_function__``-style protocol would replace the patching here and nothing else: the
rules only see ``dispatch(fn, args, kwargs)``.
"""
import functools

from .._tensor import Tensor
from ..ops._compiled_methods import as_python
from ._batched import BatchedTensor, active_levels

__all__ = ["dispatch", "dispatch_method", "register", "patched", "FALLBACK_OPS", "original"]

# ops that ran through the per-sample loop (their names), for the tests and for users curious
# about what is slow under vmap
FALLBACK_OPS = set()

# (namespace, name) or ("Tensor", name) -> rule(fn, level, args, kwargs)
_REGISTERED = {}
_rules_by_id = {}        # id(original function) -> rule, built on the first vmap
_method_rules = {}       # Tensor method name -> rule
_originals = {}          # name -> original ember function (unpatched)
_random_ids = set()      # ids of the random functions (intercepted even without batched inputs)
_random_methods = set()
# depth: running vmap calls that patched; inside: ember functions running on plain tensors
# (their own calls of random functions draw as they are, not once more per sample)
_state = {"depth": 0, "resolved": False, "inside": 0}

_NAMESPACES = {"": "ember", "F": "ember.nn.functional", "linalg": "ember.linalg",
               "special": "ember.special", "fft": "ember.fft"}


def register(rule, *names, random=False):
    """Make ``rule`` the batching rule of ``names``: ``"add"`` is ``ember.add`` and
    ``Tensor.add``, ``"F.relu"`` ``ember.nn.functional.relu``, ``".add_"`` the method only,
    ``"linalg.det"``/``"special.expit"``/``"fft.fft"`` those namespaces' functions."""
    for name in names:
        _REGISTERED[name] = (rule, random)
    _state["resolved"] = False


def _unpatched(value):
    return getattr(value, "__fx_original__", getattr(value, "__vmap_original__", value))


def _tensor_attribute(name):
    """``Tensor``'s attribute ``name`` as its Python function (a method compiled by
    ``ops._compiled_methods`` is its Python op here), or None."""
    return as_python(name, vars(Tensor).get(name))


def _resolve():
    import importlib
    _rules_by_id.clear()
    _method_rules.clear()
    _random_ids.clear()
    _random_methods.clear()
    for key, (rule, random) in _REGISTERED.items():
        if key.startswith("."):
            _method_rules[key[1:]] = rule
            if random:
                _random_methods.add(key[1:])
            continue
        prefix, _, name = key.rpartition(".")
        try:
            module = importlib.import_module(_NAMESPACES[prefix])
        except ImportError:
            continue
        fn = _unpatched(getattr(module, name, None))
        if fn is not None:
            _rules_by_id[id(fn)] = rule
            if random:
                _random_ids.add(id(fn))
        if not prefix and isinstance(_tensor_attribute(name), (type(register), property)):
            _method_rules[name] = rule
            if random:
                _random_methods.add(name)
    # a rule calling an unpatched Tensor method on a tensor of an outer level finds it by id
    for name, rule in _method_rules.items():
        attr = _tensor_attribute(name)
        if isinstance(attr, type(register)):
            fn = _unpatched(attr)
            _rules_by_id.setdefault(id(fn), rule)
            if name in _random_methods:
                _random_ids.add(id(fn))
    _state["resolved"] = True


def original(name):
    """The unpatched ``ember.<name>`` (rules call it through ``dispatch``)."""
    fn = _originals.get(name)
    if fn is None:
        import ember
        fn = _originals[name] = _unpatched(getattr(ember, name))
    return fn


def _max_level(objs):
    level = None
    for x in objs:
        if type(x) is BatchedTensor:
            if level is None or x.level > level:
                level = x.level
        elif type(x) in (tuple, list):
            if x:
                inner = _max_level(x)
                if inner is not None and (level is None or inner > level):
                    level = inner
        elif type(x) is dict:
            inner = _max_level(x.values())
            if inner is not None and (level is None or inner > level):
                level = inner
    return level


_INPLACE_DUNDERS = frozenset("__iadd__ __isub__ __imul__ __itruediv__ __ifloordiv__ __imod__ "
                             "__ipow__ __iand__ __ior__ __ixor__ __imatmul__ __ilshift__ "
                             "__irshift__ __setitem__".split())


def _is_inplace(name, kwargs):
    if name in _INPLACE_DUNDERS:
        return True
    return (name.endswith("_") and not name.startswith("_")) or kwargs.get("inplace") is True


def _check_inplace(name, args, kwargs, level):
    """torch's error when an in-place op would write a mapped value into an unmapped tensor."""
    if not args or not isinstance(args[0], Tensor):
        return
    self = args[0]
    if type(self) is BatchedTensor and self.level == level:
        return
    op = name.strip("_")
    raise RuntimeError(
        f"vmap: {op}(self, *extra_args) is not possible because there exists a Tensor `other` "
        f"in extra_args that has more elements than `self`. This happened due to `other` being "
        f"vmapped over but `self` not being vmapped over in a vmap. Please try to use "
        f"out-of-place operators instead of {op}. If said operator is being called inside the "
        f"ember framework, please file a bug report instead.")


def _run(fn, name, rule, args, kwargs, random):
    out = kwargs.get("out")
    if out is not None:
        kwargs = dict(kwargs)
        del kwargs["out"]
        result = _run(fn, name, rule, args, kwargs, random)
        if isinstance(out, (tuple, list)):
            for o, r in zip(out, result):
                dispatch_method("copy_", o, (r,), {})
            return out
        dispatch_method("copy_", out, (result,), {})
        return out
    level = _max_level(args) if args else None
    if kwargs:
        k_level = _max_level(kwargs.values())
        if k_level is not None and (level is None or k_level > level):
            level = k_level
    if random and active_levels and not _state["inside"]:
        from ._rules_random import random_rule
        return random_rule(fn, name, level, args, kwargs)
    if level is None:
        return call_original(fn, args, kwargs)
    if _is_inplace(name, kwargs):
        _check_inplace(name, args, kwargs, level)
    if rule is not None:
        result = rule(fn, level, args, kwargs)
        if result is not NotImplemented:
            return result
    return _loop_fallback(fn, name, level, args, kwargs)


def call_original(fn, args, kwargs):
    _state["inside"] += 1
    try:
        return fn(*args, **kwargs)
    finally:
        _state["inside"] -= 1


def dispatch(fn, args, kwargs):
    """Call the ember function ``fn`` (unpatched) on ``args`` that may hold BatchedTensors."""
    if not _state["resolved"]:
        _resolve()
    key = id(fn)
    return _run(fn, getattr(fn, "__name__", "?"), _rules_by_id.get(key), args, kwargs,
                key in _random_ids)


def _method(name):
    attr = _tensor_attribute(name)
    if attr is None:
        for klass in Tensor.__mro__:
            attr = vars(klass).get(name)
            if attr is not None:
                break
    attr = _unpatched(attr)
    if isinstance(attr, property):
        getter = attr.fget
        return lambda self: getter(self)
    return attr


def dispatch_method(name, self, args, kwargs):
    """Call ``Tensor.<name>`` on ``self`` and ``args`` that may hold BatchedTensors."""
    if not _state["resolved"]:
        _resolve()
    fn = _method(name)
    if name == "requires_grad_" and type(self) is BatchedTensor:
        dispatch_method(name, self.value, args, kwargs)
        return self
    if fn is None:
        raise AttributeError(f"'Tensor' object has no attribute '{name}'")
    return _run(fn, name, _method_rules.get(name), (self,) + tuple(args), kwargs,
                name in _random_methods)


# -- the fallback ------------------------------------------------------------------------------
def _select(obj, level, i):
    if type(obj) is BatchedTensor and obj.level == level:
        return obj.value.select(obj.bdim, i)
    if type(obj) in (tuple, list):
        return type(obj)(_select(x, level, i) for x in obj)
    if type(obj) is dict:
        return {k: _select(v, level, i) for k, v in obj.items()}
    return obj


def _batch_size(objs, level):
    for x in objs:
        if type(x) is BatchedTensor and x.level == level:
            return x.value.shape[x.bdim]
        if type(x) in (tuple, list) and x:
            n = _batch_size(x, level)
            if n is not None:
                return n
        if type(x) is dict:
            n = _batch_size(x.values(), level)
            if n is not None:
                return n
    return None


def stack_results(results, level):
    """One output from the per-sample outputs ``results``: tensors stacked along a new mapped
    dimension 0 at ``level``, tuples field by field, equal non-tensors kept."""
    first = results[0]
    if isinstance(first, Tensor):
        if any(tuple(r.shape) != tuple(first.shape) for r in results[1:]):
            raise RuntimeError(
                "vmap: We do not support batching operators that can output dynamic shape: the "
                "samples' results have different shapes "
                f"({', '.join(str(list(r.shape)) for r in results)})")
        return BatchedTensor(dispatch(original("stack"), (list(results),), {}), 0, level)
    if isinstance(first, (tuple, list)):
        fields = [stack_results([r[j] for r in results], level) for j in range(len(first))]
        if hasattr(first, "_fields"):
            return type(first)(*fields)
        return type(first)(fields)
    if first is None or all(r == first for r in results[1:]):
        return first
    raise RuntimeError(
        "vmap: an operation returned a Python value that differs between the samples mapped "
        f"over ({type(first).__name__}); vmap can only return tensors that depend on the data")


def _loop_fallback(fn, name, level, args, kwargs):
    """Run ``fn`` once per sample of ``level`` and stack the results: the path of ops with no
    batching rule. In-place ops write each sample into the mapped tensor's own memory."""
    FALLBACK_OPS.add(name)
    size = _batch_size(list(args) + list(kwargs.values()), level)
    results = [dispatch(fn, _select(args, level, i), _select(kwargs, level, i))
               for i in range(size)]
    if _is_inplace(name, kwargs) and args and type(args[0]) is BatchedTensor:
        return args[0]
    if size == 0:
        raise RuntimeError(f"vmap: {name} has no batching rule and the batch is empty")
    return stack_results(results, level)


# -- the patching ------------------------------------------------------------------------------
_function_wrappers = {}
_method_wrappers = {}


def _function_wrapper(fn, namespace=None):
    hit = _function_wrappers.get(id(fn))
    if hit is not None and hit.__vmap_original__ is fn:
        return hit

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return dispatch(fn, args, kwargs)

    wrapper.__vmap_original__ = fn
    _function_wrappers[id(fn)] = wrapper
    return wrapper


def _method_wrapper(name, method):
    hit = _method_wrappers.get(name)
    if hit is not None and hit.__vmap_original__ is method:
        return hit

    @functools.wraps(method)
    def wrapper(self, *args, **kwargs):
        return dispatch_method(name, self, args, kwargs)

    wrapper.__vmap_original__ = method
    _method_wrappers[name] = wrapper
    return wrapper


class patched:
    """While the outermost vmap runs: ember's callables go through ``dispatch``. ``func_globals``
    are the globals of the mapped function (ember functions imported there by name)."""

    def __init__(self, func_globals=None):
        self.func_globals = func_globals
        self.patcher = None

    def __enter__(self):
        _state["depth"] += 1
        if _state["depth"] > 1:
            return self
        from ..fx._patching import _Patcher
        from ..autograd import function as _function
        if not _state["resolved"]:
            _resolve()
        self.patcher = patcher = _Patcher()
        try:
            patches, known = _patch_list()
            for kind, where, name, wrapper in patches:
                if kind == "dict":
                    patcher.patch(where, name, wrapper)
                else:
                    patcher.patch_method(where, name, wrapper)
            if self.func_globals is not None:
                for key, value in list(self.func_globals.items()):
                    if callable(value) and known.get(id(value)) is value:
                        patcher.patch(self.func_globals, key, _function_wrapper(value))
            patcher.patch(vars(_function), "_batched_apply", _batched_function_apply)
        except BaseException:
            patcher.__exit__(None, None, None)
            _state["depth"] -= 1
            raise
        return self

    def __exit__(self, *exc):
        _state["depth"] -= 1
        if self.patcher is not None:
            self.patcher.__exit__(*exc)
            self.patcher = None


class _Recorder:
    """Collects the patches ``patch_ember_callables`` asks for, to apply them on each vmap."""

    def __init__(self):
        self.patches = []

    def patch(self, frame_dict, name, new_fn):
        self.patches.append(("dict", frame_dict, name, new_fn))

    def patch_method(self, cls, name, new_fn):
        self.patches.append(("class", cls, name, new_fn))


_patch_cache = {}


def _patch_list():
    """What to patch (built once, again when a namespace or Tensor gained names) and the ember
    functions a mapped function's module may have imported by name."""
    import sys
    from ..fx._patching import ember_functions, patch_ember_callables
    from ..fx._names import PUBLIC_NAMESPACES
    key = (len(vars(Tensor)),) + tuple(len(vars(sys.modules[n])) if n in sys.modules else -1
                                       for n in PUBLIC_NAMESPACES)
    if _patch_cache.get("key") != key:
        recorder = _Recorder()
        patch_ember_callables(recorder, _function_wrapper, _method_wrapper)
        _patch_defining_modules(recorder)
        _patch_module_functions(recorder)
        known = ember_functions()
        from ..nn import Module
        recorder.patch_method(Module, "__call__", _module_call_wrapper(
            _unpatched(vars(Module)["__call__"]), known))
        _patch_cache.update(key=key, patches=recorder.patches, known=known)
    return _patch_cache["patches"], _patch_cache["known"]


def _patch_defining_modules(recorder):
    """Each public function also in the module that defines it, so that ember code reaching it
    through that module (``attention.scaled_dot_product_attention``) dispatches too."""
    import sys
    seen = {(id(where), name) for kind, where, name, _ in recorder.patches if kind == "dict"}
    for kind, _where, _name, wrapper in list(recorder.patches):
        if kind != "dict":
            continue
        fn = wrapper.__vmap_original__
        module = sys.modules.get(getattr(fn, "__module__", None) or "")
        own = getattr(fn, "__name__", None)
        if module is None or own is None:
            continue
        d = vars(module)
        if d.get(own) is fn and (id(d), own) not in seen:
            seen.add((id(d), own))
            recorder.patch(d, own, wrapper)


def _module_call_wrapper(call, known):
    """``Module.__call__`` while vmap runs: ember functions a layer keeps in its own attributes
    (``TransformerEncoderLayer.activation``) go through the dispatch step for the call."""
    function = type(_module_call_wrapper)

    @functools.wraps(call)
    def wrapper(self, *args, **kwargs):
        d = self.__dict__
        swaps = [(k, v) for k, v in d.items() if type(v) is function and known.get(id(v)) is v]
        for k, v in swaps:
            d[k] = _function_wrapper(v)
        try:
            return call(self, *args, **kwargs)
        finally:
            for k, v in swaps:
                d[k] = v

    wrapper.__vmap_original__ = call
    return wrapper


def _patch_module_functions(patcher):
    """nn layers that keep their functional as a class attribute (``nn.ReLU._fn``)."""
    from .. import nn
    for value in vars(nn).values():
        if isinstance(value, type) and issubclass(value, nn.Module):
            fn = vars(value).get("_fn")
            if isinstance(fn, staticmethod):
                patcher.patch_method(value, "_fn", staticmethod(_function_wrapper(
                    _unpatched(fn.__func__))))
            elif fn is not None and callable(fn):
                patcher.patch_method(value, "_fn", _function_wrapper(_unpatched(fn)))


def _batched_function_apply(cls, args, kwargs):
    """``autograd.Function.apply`` while vmap runs: None when no argument is mapped."""
    level = _max_level(args) if args else None
    if kwargs:
        k_level = _max_level(kwargs.values())
        if k_level is not None and (level is None or k_level > level):
            level = k_level
    if level is None:
        return None
    from ._custom_function import apply_batched
    return apply_batched(cls, level, args, kwargs)
