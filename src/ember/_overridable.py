"""The one list of ember's overridable callables: the functions of its public namespaces and the
methods, operators and properties of ``Tensor``. ``ember.fx`` and ``ember.jit`` patch these while
they trace, ``ember.overrides`` lists them and ``__torch_function__`` dispatch routes them."""
import importlib
import types

__all__ = ["PUBLIC_NAMESPACES", "NOT_OVERRIDABLE", "namespaces", "is_ember_function",
           "namespace_functions", "overridable_functions", "tensor_attributes", "TENSOR_DUNDERS"]

# The public namespaces an ember function is reached through, in the order a name is looked for.
PUBLIC_NAMESPACES = ("ember", "ember.nn.functional", "ember.special", "ember.linalg", "ember.fft")

# functions that answer about their argument rather than compute on it (torch.is_tensor(proxy) is
# False under torch.fx; torch.overrides lists them among the ignored functions)
NOT_OVERRIDABLE = frozenset(["is_tensor", "is_storage", "typename", "wrap"])

# modules whose functions take no tensors (settings, dtypes, devices, grad modes, files) or are
# ember's own helpers that a namespace re-exports: ``__torch_function__`` never overrides them
# (torch lists its counterparts among the ignored functions)
_TENSORLESS_MODULES = frozenset([
    "ember._backend", "ember._backend.parallel", "ember._device", "ember._dtype", "ember._settings",
    "ember._tensor", "ember._tensor_str", "ember.amp.autocast_mode", "ember.amp.policy",
    "ember.autograd.anomaly_mode", "ember.autograd.grad_mode", "ember.serialization",
    "ember.overrides", "ember._torch_function"])

# Tensor operators and protocol methods that take part (their names start with "_", so they are
# named one by one)
_OPERATORS = ("add sub mul truediv floordiv mod pow matmul and or xor lshift rshift").split()
TENSOR_DUNDERS = frozenset(
    [f"__{op}__" for op in _OPERATORS] + [f"__r{op}__" for op in _OPERATORS]
    + [f"__i{op}__" for op in _OPERATORS]
    + ["__neg__", "__pos__", "__abs__", "__invert__", "__eq__", "__ne__", "__lt__", "__le__",
       "__gt__", "__ge__", "__getitem__", "__setitem__", "__len__", "__iter__", "__contains__",
       "__float__", "__int__", "__bool__", "__index__", "__complex__", "__format__",
       "__reversed__", "__array__"])

# Tensor attributes that are the protocol itself or build the subclass: never routed through it
_TENSOR_NEVER = frozenset(["as_subclass"])


def namespaces():
    """[(name, module)] for each of ``PUBLIC_NAMESPACES`` that imports."""
    out = []
    for name in PUBLIC_NAMESPACES:
        try:
            out.append((name, importlib.import_module(name)))
        except ImportError:
            continue
    return out


def is_ember_function(value):
    """True for a Python function defined in an ember module."""
    if not isinstance(value, (types.FunctionType, types.BuiltinFunctionType)):
        return False
    module = getattr(value, "__module__", None) or ""
    return module == "ember" or module.startswith("ember.")


def namespace_functions():
    """[(namespace name, module, attribute, function)] for every overridable function reachable
    from a public namespace (a function reached under several names appears under each)."""
    out = []
    for ns_name, module in namespaces():
        for key, value in list(vars(module).items()):
            if key.startswith("__") or key in NOT_OVERRIDABLE or not is_ember_function(value):
                continue
            out.append((ns_name, module, key, value))
    return out


def overridable_functions():
    """``namespace_functions()`` less the private names and the functions that take no tensors
    (``_TENSORLESS_MODULES``, ``compile``): what ``__torch_function__`` overrides."""
    return [entry for entry in namespace_functions()
            if not entry[2].startswith("_") and entry[2] != "compile"
            and (getattr(entry[3], "__module__", "") or "") not in _TENSORLESS_MODULES]


def ignored_functions():
    """The public namespace functions ``__torch_function__`` does not override."""
    kept = {id(entry[3]) for entry in overridable_functions()}
    out = [fn for _, module in namespaces() for key, fn in vars(module).items()
           if key in NOT_OVERRIDABLE and callable(fn)]
    out += [entry[3] for entry in namespace_functions()
            if id(entry[3]) not in kept and not entry[2].startswith("_")]
    return out


def tensor_attributes():
    """[(attribute, value)] for every overridable method (a plain function), operator and
    property of ``Tensor``."""
    from ._tensor import Tensor
    from .ops._compiled_methods import as_python
    out = []
    for key, value in vars(Tensor).items():
        if key in _TENSOR_NEVER or (key.startswith("_") and key not in TENSOR_DUNDERS):
            continue
        value = as_python(key, value)
        if isinstance(value, (types.FunctionType, property)):
            out.append((key, value))
    return out
