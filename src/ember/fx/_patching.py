"""What a trace patches, and how it puts everything back.

ember's eager functions and Tensor methods know nothing of tracing: they take arrays. While a
``Tracer`` runs a program, it replaces the callables that program can reach with wrappers that
record a node when a ``Proxy`` is among their arguments, and call the original otherwise: the
functions of the namespaces ``ember``, ``ember.nn.functional``, ``ember.special`` and
``ember.linalg``, ember functions imported by name into the traced code's module globals, and
``ember.Tensor``'s methods and operators (for ``buffer + proxy``). The ``_Patcher`` restores
every one of them when the trace ends, also when it raises, so eager calls outside a trace run
the original functions with no added work.
"""
import functools
import inspect
import types

from .._overridable import NOT_OVERRIDABLE as _NEVER_WRAP
from .._overridable import is_ember_function as _is_ember_function
from .._overridable import namespaces as _namespaces
from .proxy import _find_proxy

__all__ = ["_Patcher", "ember_function_wrapper", "ember_patches", "create_wrapped_func",
           "patch_ember_callables"]

_MISSING = object()

# ember functions whose torch counterparts are Python functions that hand a Proxy on with their
# required parameters positional and every parameter with a default by keyword (filled in): a
# node records them that way, as torch.fx's does (``relu(x, inplace = False)``). Other functions
# (torch's builtins) record the arguments as the program passed them.
_TORCH_PYTHON_LEVEL = {
    "ember.nn.functional": frozenset("""
        adaptive_avg_pool2d adaptive_max_pool1d_with_indices adaptive_max_pool2d_with_indices
        affine_grid alpha_dropout batch_norm binary_cross_entropy binary_cross_entropy_with_logits
        celu cosine_embedding_loss cross_entropy ctc_loss dropout dropout1d dropout2d dropout3d
        elu embedding embedding_bag feature_alpha_dropout fold gaussian_nll_loss glu grid_sample
        group_norm hardsigmoid hardswish hardtanh hinge_embedding_loss huber_loss instance_norm
        interpolate kl_div layer_norm leaky_relu local_response_norm log_softmax lp_pool1d
        lp_pool2d margin_ranking_loss max_pool1d_with_indices max_pool2d_with_indices
        max_pool3d_with_indices max_unpool1d max_unpool2d mish mse_loss
        multi_head_attention_forward multi_margin_loss multilabel_margin_loss
        multilabel_soft_margin_loss nll_loss normalize pad poisson_nll_loss relu relu6 rms_norm selu
        sigmoid silu smooth_l1_loss soft_margin_loss softmax softmin softsign tanh tanhshrink
        threshold triplet_margin_loss triplet_margin_with_distance_loss unfold upsample
        upsample_bilinear upsample_nearest max_pool1d max_pool2d max_pool3d adaptive_max_pool1d
        adaptive_max_pool2d adaptive_max_pool3d
    """.split()),
    "ember": frozenset(["cdist", "norm", "split"]),
}

# Tensor operators recorded as the method torch.fx records for them when a real tensor is on
# the left of a Proxy (``buffer + proxy`` becomes ``buffer.add(proxy)``)
DUNDER_TO_METHOD = {
    "__add__": "add", "__sub__": "sub", "__mul__": "mul", "__truediv__": "div",
    "__matmul__": "matmul", "__pow__": "pow", "__mod__": "remainder", "__lt__": "lt",
    "__le__": "le", "__gt__": "gt", "__ge__": "ge", "__eq__": "eq", "__ne__": "ne",
}
_KEPT_DUNDERS = frozenset(["__floordiv__", "__and__", "__or__", "__xor__", "__lshift__",
                           "__rshift__", "__getitem__", "__setitem__", "__iadd__", "__isub__",
                           "__imul__", "__itruediv__", "__ifloordiv__", "__imod__", "__ipow__",
                           "__iand__", "__ior__", "__ixor__", "__imatmul__"])


class _Patcher:
    """Replaces entries of dicts and attributes of classes, and restores them all on exit, in
    reverse order, whatever happened in between."""

    def __init__(self):
        self.patches_made = []
        self.visited = set()

    def __enter__(self):
        return self

    def patch(self, frame_dict, name, new_fn):
        """Set ``frame_dict[name] = new_fn`` until exit (removing the key if it was absent)."""
        self.patches_made.append(("dict", frame_dict, name, frame_dict.get(name, _MISSING)))
        frame_dict[name] = new_fn

    def patch_method(self, cls, name, new_fn):
        """Set the class attribute ``cls.name = new_fn`` until exit."""
        self.patches_made.append(("class", cls, name, cls.__dict__.get(name, _MISSING)))
        setattr(cls, name, new_fn)

    def visit_once(self, thing):
        """True the first time ``thing`` (a globals dict) is seen by this patcher."""
        key = id(thing)
        if key in self.visited:
            return False
        self.visited.add(key)
        return True

    def __exit__(self, exc_type, exc_val, exc_tb):
        while self.patches_made:
            kind, where, name, orig = self.patches_made.pop()
            if kind == "dict":
                if orig is _MISSING:
                    where.pop(name, None)
                else:
                    where[name] = orig
            elif orig is _MISSING:
                try:
                    delattr(where, name)
                except AttributeError:
                    pass
            else:
                setattr(where, name, orig)
        self.visited.clear()


@functools.cache
def _signature(fn):
    try:
        return inspect.signature(fn)
    except (TypeError, ValueError):
        return None


def _normalize(fn, args, kwargs):
    """Required parameters positional, the others by keyword with defaults filled in."""
    sig = _signature(fn)
    if sig is None:
        return args, kwargs
    try:
        bound = sig.bind(*args, **kwargs)
    except TypeError:
        return args, kwargs
    pos, kw = [], {}
    for name, param in sig.parameters.items():
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            return args, kwargs
        if param.default is param.empty and param.kind != param.KEYWORD_ONLY:
            pos.append(bound.arguments[name])
        else:
            kw[name] = bound.arguments.get(name, param.default)
    return tuple(pos), kw


_function_wrappers = {}
_method_wrappers = {}


def ember_function_wrapper(fn, namespace):
    """The wrapper of the ember function ``fn`` reached through ``namespace``: records a
    call_function node whose target is ``fn`` when a Proxy is among the arguments."""
    key = (id(fn), namespace)
    hit = _function_wrappers.get(key)
    if hit is not None and hit.__fx_original__ is fn:
        return hit
    normalize = getattr(fn, "__name__", None) in _TORCH_PYTHON_LEVEL.get(namespace, ())

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        proxy = _find_proxy(args, kwargs)
        if proxy is None:
            return fn(*args, **kwargs)
        if normalize:
            args, kwargs = _normalize(fn, args, kwargs)
        return proxy.tracer.create_proxy("call_function", fn, args, kwargs)

    wrapper.__fx_original__ = fn
    _function_wrappers[key] = wrapper
    return wrapper


def _tensor_method_wrapper(name, orig):
    hit = _method_wrappers.get(name)
    if hit is not None and hit.__fx_original__ is orig:
        return hit
    method = DUNDER_TO_METHOD.get(name, name)

    @functools.wraps(orig)
    def wrapper(*args, **kwargs):
        proxy = _find_proxy(args, kwargs)
        if proxy is None:
            return orig(*args, **kwargs)
        return proxy.tracer.create_proxy("call_method", method, args, kwargs)

    wrapper.__fx_original__ = orig
    _method_wrappers[name] = wrapper
    return wrapper


def create_wrapped_func(orig_fn):
    """The wrapper ``wrap``/``autowrap_functions`` install: records a call_function node of
    ``orig_fn`` (marked ``is_wrapped``) when a Proxy is among the arguments."""
    @functools.wraps(orig_fn)
    def wrapped(*args, **kwargs):
        proxy = _find_proxy(args, kwargs)
        if proxy is None:
            return orig_fn(*args, **kwargs)
        return_proxy = proxy.tracer.create_proxy("call_function", orig_fn, args, kwargs)
        return_proxy.node.meta["is_wrapped"] = True
        return return_proxy

    wrapped.__fx_original__ = orig_fn
    return wrapped


def namespace_of(fn):
    """The namespace whose wrapper a function imported by name gets."""
    module = getattr(fn, "__module__", "") or ""
    for name in ("ember.nn.functional", "ember.special", "ember.linalg", "ember.fft"):
        if module.startswith(name + ".") or module == name:
            return name
    return "ember"


def ember_functions():
    """id -> function, for every function of ember's public namespaces."""
    found = {}
    for _, module in _namespaces():
        for key, value in vars(module).items():
            value = getattr(value, "__fx_original__", value)
            if key not in _NEVER_WRAP and _is_ember_function(value):
                found[id(value)] = value
    return found


def patch_ember_callables(patcher, function_wrapper, method_wrapper):
    """Install ``function_wrapper(fn, namespace)`` for every function of ember's public
    namespaces and ``method_wrapper(name, method)`` for ``Tensor``'s methods and operators in
    ``patcher`` (a trace's wrappers; ``ember.func.vmap``'s dispatch uses the same list)."""
    from .. import Tensor
    from ..ops._compiled_methods import as_python
    for ns_name, module in _namespaces():
        d = module.__dict__
        for key, value in list(d.items()):
            if key.startswith("__") or key in _NEVER_WRAP or not _is_ember_function(value):
                continue
            patcher.patch(d, key, function_wrapper(value, ns_name))
    for key, value in list(vars(Tensor).items()):
        value = as_python(key, value)
        if not isinstance(value, types.FunctionType):
            continue
        if key.startswith("_") and key not in DUNDER_TO_METHOD and key not in _KEPT_DUNDERS:
            continue
        patcher.patch_method(Tensor, key, method_wrapper(key, value))


def ember_patches(patcher):
    """Install the wrappers of ember's namespace functions and Tensor methods in ``patcher``."""
    patch_ember_callables(patcher, ember_function_wrapper, _tensor_method_wrapper)
