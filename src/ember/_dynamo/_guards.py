"""Guards: what must hold for a captured graph to stand for a call.

A call's signature describes each argument (a tensor by shape, dtype, device and
requires_grad; a Python scalar by its value; anything else by identity) and grad mode; a graph
is looked up by it. A dynamic graph matches any size of the dimensions it marks (sizes 0 and 1
excepted, as torch specializes them). A graph also checks the ``training``
flags of the modules the capture called and that the root's parameters and buffers it holds
are still the root's. A failed guard is described in torch's words (``tensor 'x' size
mismatch at index 0. expected 4, actual 8``)."""
from .. import Tensor, is_grad_enabled
from . import config

__all__ = ["signature", "dynamic_pattern", "mismatch", "StateGuard"]

_TENSOR = "tensor"
_MISSING = object()
_SCALARS = (bool, int, float, complex, str, type(None))


def _describe(value):
    if isinstance(value, Tensor):
        return (_TENSOR, tuple(value.shape), value.dtype, value.device, value.requires_grad)
    if type(value) in _SCALARS:
        return (type(value), value)
    if isinstance(value, (tuple, list)):
        return (type(value), tuple(_describe(v) for v in value))
    if isinstance(value, dict):
        return (dict, tuple((k, _describe(v)) for k, v in value.items()))
    return ("object", id(value))


def signature(args, kwargs):
    """The hashable description of a call: its arguments, keyword names and grad mode."""
    described = tuple(_describe(a) for a in args)
    if kwargs:
        described += tuple((k, _describe(v)) for k, v in kwargs.items())
    return described + (is_grad_enabled(),)


def dynamic_pattern(key, positions):
    """``key`` with the sizes at ``positions`` (pairs of argument index and dimension)
    replaced by None, or None when one of them is a size torch would specialize (0 or 1)."""
    items = list(key)
    for i, d in positions:
        desc = items[i]
        if isinstance(desc[0], str) and desc[0] != _TENSOR:   # a keyword argument
            name, desc = desc
        else:
            name = None
        if desc[0] != _TENSOR or len(desc[1]) <= d or desc[1][d] in config.specialize_sizes:
            return None
        shape = list(desc[1])
        shape[d] = None
        desc = (_TENSOR, tuple(shape)) + desc[2:]
        items[i] = desc if name is None else (name, desc)
    return tuple(items)


def changed_dims(old, new):
    """The (argument index, dimension) pairs where only sizes of tensor arguments differ
    between two signatures, or None when anything else differs."""
    if len(old) != len(new) or old[-1] != new[-1]:
        return None
    positions = []
    for i, (a, b) in enumerate(zip(old[:-1], new[:-1])):
        if a == b:
            continue
        if isinstance(a[0], str) and a[0] != _TENSOR:
            if a[0] != b[0]:
                return None
            a, b = a[1], b[1]
        if a[0] != _TENSOR or b[0] != _TENSOR or len(a[1]) != len(b[1]) or a[2:] != b[2:]:
            return None
        positions += [(i, d) for d, (x, y) in enumerate(zip(a[1], b[1])) if x != y]
    return positions or None


def mismatch(expected, actual, names, dynamic_positions=()):
    """torch's description of the first guard of ``expected`` that ``actual`` fails."""
    if len(expected) != len(actual):
        return f"len(L['args']) == {len(expected) - 1}"
    if expected[-1] != actual[-1]:
        return "GLOBAL_STATE changed: grad_mode"
    for i, (e, a) in enumerate(zip(expected[:-1], actual[:-1])):
        name = names[i] if i < len(names) else f"args[{i}]"
        if isinstance(e[0], str) and e[0] not in (_TENSOR, "object"):
            e, a = e[1], a[1] if isinstance(a[0], str) else a
        if e == a:
            continue
        if e[0] == _TENSOR and a[0] == _TENSOR:
            if len(e[1]) != len(a[1]):
                return f"tensor '{name}' rank mismatch. expected {len(e[1])}, actual {len(a[1])}"
            for d, (es, as_) in enumerate(zip(e[1], a[1])):
                if es is None:
                    if as_ in config.specialize_sizes:
                        return (f"tensor '{name}' size mismatch at index {d}. expected a size "
                                f"other than {as_}, actual {as_}")
                    continue
                if es != as_:
                    return (f"tensor '{name}' size mismatch at index {d}. expected {es}, "
                            f"actual {as_}")
            if e[2] != a[2]:
                return f"tensor '{name}' dtype mismatch. expected {e[2]}, actual {a[2]}"
            if e[3] != a[3]:
                return f"tensor '{name}' device mismatch. expected {e[3]}, actual {a[3]}"
            if e[4] != a[4]:
                return (f"tensor '{name}' requires_grad mismatch. expected "
                        f"requires_grad={int(e[4])}")
            continue
        if e[0] == "object":
            return f"___check_obj_id(L['{name}'], {e[1]})"
        if e[0] is not a[0]:
            return f"type(L['{name}']) == {getattr(e[0], '__name__', e[0])}"
        return f"L['{name}'] == {e[1]!r}"
    return None


class StateGuard:
    """The module state a graph depends on: training flags of the modules called, the Python
    scalar attributes (numbers, strings, None) of the modules whose code the graph holds, and
    the root's tensors it holds (still the same objects)."""

    def __init__(self, capture):
        root = capture.root
        paths = {id(m): name for name, m in root.named_modules()}
        self.modules = [(m, m.training, _module_name(paths.get(id(m)), m))
                        for m in capture.modules.values()]
        self.scalars = []
        for m in capture.traced_modules.values():
            values = {k: v for k, v in vars(m).items()
                      if type(v) in _SCALARS and not k.startswith("_") and k != "training"}
            if values:
                self.scalars.append((m.__dict__, values, _module_name(paths.get(id(m)), m)))
        self.attributes = []
        for qual, tensor in capture.attributes.items():
            *path, leaf = qual.split(".")
            try:
                owner = root.get_submodule(".".join(path)) if path else root
            except AttributeError:
                continue
            for store in (owner._parameters, owner._buffers, owner.__dict__):
                if store.get(leaf) is tensor:
                    self.attributes.append((store, leaf, tensor, qual))
                    break

    def failure(self):
        for module, training, name in self.modules:
            if module.training is not training:
                return f"{name}.training == {training}"
        for attributes, values, name in self.scalars:
            for key, value in values.items():
                if attributes.get(key, _MISSING) != value:
                    return f"{name}.{key} == {value!r}"
        for store, leaf, tensor, qual in self.attributes:
            if store.get(leaf) is not tensor:
                return f"___check_obj_id(L['self'].{qual}, {id(tensor)})"
        return None


def _module_name(path, module):
    if path is None:
        return f"L['{type(module).__name__}']"
    return "L['self']" + (f".{path}" if path else "")
