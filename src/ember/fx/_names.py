"""Names of callables as generated code and printed graphs spell them: ``getattr``,
``operator.add``, ``ember.flatten``, ``ember.nn.functional.relu``, ``mymodule.myfn``."""
import builtins
import re

# The public namespaces an ember function is reached through, in the order a name is looked for.
# A function defined under one of these packages is spelled through that package first (so
# ``F.relu``, which ``ember.relu`` also is, prints as ``ember.nn.functional.relu``, as torch's does).
from .._overridable import PUBLIC_NAMESPACES, namespaces  # noqa: F401

_public_paths = None


def _modules():
    return namespaces()


def _build_public_paths():
    global _public_paths
    paths = {}
    mods = _modules()
    for prefix, mod in reversed(mods):     # the earlier namespaces win
        for key, value in vars(mod).items():
            if key.startswith("__") or not callable(value):
                continue
            value = getattr(value, "__fx_original__", value)    # a function patched by a trace
            if id(value) in paths and paths[id(value)][2] and key != getattr(value, "__name__", ""):
                continue      # an alias (ember.concatenate) does not replace the function's name
            paths[id(value)] = (value, f"{prefix}.{key}", key == getattr(value, "__name__", ""))
    # a function defined inside a namespace's own package is spelled through that package
    for prefix, mod in mods[1:]:
        for key, value in vars(mod).items():
            value = getattr(value, "__fx_original__", value)
            if callable(value) and (getattr(value, "__module__", "") or "").startswith(prefix + "."):
                hit = paths.get(id(value))
                if hit is not None and hit[1].startswith(prefix + ".") and hit[2]:
                    continue
                paths[id(value)] = (value, f"{prefix}.{key}", key == getattr(value, "__name__", ""))
    _public_paths = paths
    return paths


def public_path(obj):
    """``'ember.flatten'`` for an ember function reachable from a public namespace, else None."""
    paths = _public_paths if _public_paths is not None else _build_public_paths()
    hit = paths.get(id(obj))
    if hit is not None and hit[0] is obj:
        return hit[1]
    return None


def is_from_ember(obj):
    module = getattr(obj, "__module__", None) or ""
    return module == "ember" or module.startswith("ember.")


def qualified_name(func):
    """The dotted name generated code uses for ``func`` (torch.fx's ``_get_qualified_name``)."""
    if getattr(builtins, getattr(func, "__name__", ""), None) is func:
        return func.__name__
    name = getattr(func, "__name__", None)
    if name is None:
        raise RuntimeError(f"Unable to represent {func!r} by a qualified name: it has no __name__")
    if name == "<lambda>":
        raise RuntimeError("Unable to represent lambda")
    path = public_path(func)
    if path is not None:
        return path
    module = getattr(func, "__module__", None) or ""
    qualname = getattr(func, "__qualname__", name)
    return f"{module}.{qualname}" if module else qualname


_snake_case_sub = re.compile(r"(?<=[a-z])([A-Z])").sub


def snake_case(s):
    """``'camelCase'`` -> ``'camel_case'``."""
    return _snake_case_sub(r"_\1", s).lower()
