"""``save`` and ``load`` of traced modules and functions, in ember's trace format.

The format is ember's own, not TorchScript's (``torch.jit.load`` cannot read it, nor can ember
read TorchScript files). A file is a zip archive holding:

- ``ember_trace/graph.json``: ``{"format": "ember.jit.trace", "version": 1, "kind": "module" |
  "function", "name", "training", "methods": {name: [node, ...]}, "modules": {path: spec},
  "parameters": [names]}``. A node is ``{"name", "op", "target", "args", "kwargs"}``: the op is
  one of ember.fx's, a call_function target is the qualified name of the function
  (``ember.nn.functional.relu``, ``operator.add``), and arguments are JSON with tagged objects
  for what JSON lacks (``{"$node": name}``, ``{"$tuple": [...]}``, ``{"$dtype": "float32"}``,
  ``{"$slice": [start, stop, step]}``, ...). A ``call_module`` node's module (an ember layer)
  is described in ``modules`` by its class and its plain attributes; its tensors are stored
  with the others.
- ``ember_trace/tensors.pt``: an ``ember.save`` archive of a dict from qualified name
  (``fc1.weight``, ``_tensor_constant0``) to tensor: parameters, buffers and constants.
- ``ember_trace/extra/<name>``: the ``_extra_files``.

Loading reads only JSON and a weights-only tensor archive, and resolves functions and classes
only inside ember (and Python's ``operator`` and ``math``): no code from the file runs.
"""
import importlib
import io
import json
import math
import os
import zipfile
from collections import OrderedDict

from ..fx.graph import Graph
from ..fx.graph_module import GraphModule
from ..fx._names import qualified_name

__all__ = ["save", "load"]

FORMAT = "ember.jit.trace"
VERSION = 1
_PREFIX = "ember_trace/"
_RESOLVABLE = ("ember", "operator", "math", "builtins")
_MODULE_STATE = ("_parameters", "_buffers", "_modules", "_non_persistent_buffers_set")


# -- values ----------------------------------------------------------------------------------------
def _encode(value):
    from .. import device, dtype
    from .._layout import layout
    from .._memory_format import memory_format
    from ..fx.node import Node
    if isinstance(value, Node):
        return {"$node": value.name}
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return value if math.isfinite(value) else {"$float": repr(value)}
    if isinstance(value, complex):
        return {"$complex": [_encode(value.real), _encode(value.imag)]}
    if isinstance(value, tuple):
        return {"$tuple": [_encode(v) for v in value]}
    if isinstance(value, list):
        return [_encode(v) for v in value]
    if isinstance(value, (set, frozenset)):
        return {"$set": [_encode(v) for v in sorted(value, key=repr)]}
    if isinstance(value, dict):
        tag = "$odict" if isinstance(value, OrderedDict) else "$dict"
        return {tag: [[_encode(k), _encode(v)] for k, v in value.items()]}
    if isinstance(value, slice):
        return {"$slice": [_encode(value.start), _encode(value.stop), _encode(value.step)]}
    if value is Ellipsis:
        return {"$ellipsis": 0}
    if isinstance(value, dtype):
        return {"$dtype": str(value).split(".")[-1]}
    if isinstance(value, device):
        return {"$device": str(value)}
    if isinstance(value, memory_format):
        return {"$memory_format": repr(value).split(".")[-1]}
    if isinstance(value, layout):
        return {"$layout": value.name}
    if callable(value):
        return {"$fn": _function_name(value)}
    raise RuntimeError(f"ember.jit.save cannot store a value of type {type(value).__name__}: "
                       f"{value!r}")


def _function_name(fn):
    name = qualified_name(fn)
    if name.startswith("_operator."):
        name = name[1:]
    if name.split(".")[0] not in _RESOLVABLE and "." in name:
        raise RuntimeError(f"ember.jit.save can store calls of ember functions only; the graph "
                           f"calls {name}")
    return name if "." in name else f"builtins.{name}"


def _resolve(name):
    root = name.split(".")[0]
    if root not in _RESOLVABLE:
        raise RuntimeError(f"ember.jit.load: {name!r} is not an ember function or class")
    parts = name.split(".")
    for i in range(len(parts) - 1, 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        for attr in parts[i:]:
            obj = getattr(obj, attr)
        return obj
    raise RuntimeError(f"ember.jit.load cannot find {name!r}")


def _decode(value, nodes=None):
    import ember
    if isinstance(value, list):
        return [_decode(v, nodes) for v in value]
    if not isinstance(value, dict):
        return value
    (tag, body), = value.items()
    if tag == "$node":
        return nodes[body]
    if tag == "$float":
        return float(body)
    if tag == "$complex":
        return complex(_decode(body[0]), _decode(body[1]))
    if tag == "$tuple":
        return tuple(_decode(v, nodes) for v in body)
    if tag == "$set":
        return {_decode(v, nodes) for v in body}
    if tag in ("$dict", "$odict"):
        items = [(_decode(k, nodes), _decode(v, nodes)) for k, v in body]
        return OrderedDict(items) if tag == "$odict" else dict(items)
    if tag == "$slice":
        return slice(*(_decode(v, nodes) for v in body))
    if tag == "$ellipsis":
        return Ellipsis
    if tag == "$dtype":
        return getattr(ember, body)
    if tag == "$device":
        return ember.device(body)
    if tag == "$memory_format":
        return getattr(ember, body)
    if tag == "$layout":
        return getattr(ember, body)
    if tag == "$fn":
        return _resolve(body)
    raise RuntimeError(f"ember.jit.load: unknown tag {tag!r} in the graph")


# -- graphs and modules ----------------------------------------------------------------------------
def _encode_graph(graph):
    out = []
    for node in graph.nodes:
        target = {"$fn": _function_name(node.target)} if node.op == "call_function" else \
            node.target
        out.append({"name": node.name, "op": node.op, "target": target,
                    "args": _encode(tuple(node.args)), "kwargs": _encode(dict(node.kwargs))})
    return out


def _decode_graph(nodes_json):
    graph = Graph()
    nodes = {}
    for spec in nodes_json:
        target = spec["target"]
        if spec["op"] == "call_function":
            target = _decode(target)
        args = _decode(spec["args"], nodes)
        kwargs = _decode(spec["kwargs"], nodes)
        if spec["op"] == "output":
            node = graph.output(args[0])
        else:
            node = graph.create_node(spec["op"], target, args, kwargs, name=spec["name"])
        nodes[spec["name"]] = node
    return graph


def _encode_module(module, path, tensors):
    from ..nn import Module
    cls = type(module)
    if not (cls.__module__ or "").startswith("ember."):
        raise RuntimeError(f"ember.jit.save can store ember's own layers only; {path} is a "
                           f"{cls.__qualname__}")
    attrs = {}
    for key, value in vars(module).items():
        if key in _MODULE_STATE or (key.startswith("_") and key.endswith("hooks")):
            continue
        if isinstance(value, OrderedDict) and "hook" in key:
            continue
        if isinstance(value, Module):
            continue
        attrs[key] = _encode(value)
    spec = {"class": f"{cls.__module__}.{cls.__qualname__}", "attrs": attrs,
            "parameters": {}, "buffers": {}, "children": {},
            "non_persistent": sorted(module._non_persistent_buffers_set)}
    for name, p in module._parameters.items():
        key = f"{path}.{name}"
        spec["parameters"][name] = None if p is None else key
        if p is not None:
            tensors[key] = p
    for name, b in module._buffers.items():
        key = f"{path}.{name}"
        spec["buffers"][name] = None if b is None else key
        if b is not None:
            tensors[key] = b
    for name, child in module._modules.items():
        spec["children"][name] = None if child is None else _encode_module(
            child, f"{path}.{name}", tensors)
    return spec


def _decode_module(spec, tensors):
    from ..nn import Module, Parameter
    cls = _resolve(spec["class"])
    if not (isinstance(cls, type) and issubclass(cls, Module)):
        raise RuntimeError(f"ember.jit.load: {spec['class']} is not an ember module")
    module = cls.__new__(cls)
    Module.__init__(module)
    for key, value in spec["attrs"].items():
        object.__setattr__(module, key, _decode(value))
    for name, key in spec["parameters"].items():
        module._parameters[name] = None if key is None else _as_parameter(tensors[key],
                                                                         Parameter)
    for name, key in spec["buffers"].items():
        module._buffers[name] = None if key is None else tensors[key]
    module._non_persistent_buffers_set = set(spec["non_persistent"])
    for name, child in spec["children"].items():
        module._modules[name] = None if child is None else _decode_module(child, tensors)
    return module


def _as_parameter(tensor, parameter_cls):
    if isinstance(tensor, parameter_cls):
        return tensor
    return parameter_cls(tensor, requires_grad=tensor.requires_grad)


# -- save and load ---------------------------------------------------------------------------------
def _graph_modules(m):
    from ._trace import ScriptFunction, TracedModule
    if isinstance(m, TracedModule):
        methods = {"forward": m}
        methods.update({k: v.graph_module for k, v in m._traced_methods.items()})
        return "module", methods, m
    if isinstance(m, ScriptFunction):
        return "function", {"forward": m.graph_module}, m.graph_module
    raise TypeError(f"ember.jit.save expects a module or function made by ember.jit.trace, got "
                    f"{type(m).__name__} (ember cannot write TorchScript; save an nn.Module's "
                    f"state_dict with ember.save)")


def save(m, f, _extra_files=None):
    """Save a traced module or function (from ``ember.jit.trace``) to ``f``, a path or a binary
    file, in ember's trace format: a zip file with the graph as JSON and the parameters,
    buffers and constants as an ``ember.save`` archive; ``_extra_files`` (name -> str or bytes)
    are stored beside them. This is not TorchScript's format: ``torch.jit.load`` cannot read
    it. ``ember.jit.load`` rebuilds the module without running code from the file."""
    from ..nn import Parameter
    kind, methods, holder = _graph_modules(m)
    tensors = {}
    modules = {}
    graphs = {}
    parameters = []
    for method, gm in methods.items():
        graphs[method] = _encode_graph(gm.graph)
        for node in gm.graph.nodes:
            if node.op == "get_attr" and node.target not in tensors:
                value = gm.get_parameter(node.target) if _is_parameter(gm, node.target) else \
                    _fetch(gm, node.target)
                tensors[node.target] = value
                if isinstance(value, Parameter):
                    parameters.append(node.target)
            elif node.op == "call_module" and node.target not in modules:
                modules[node.target] = _encode_module(gm.get_submodule(node.target),
                                                      node.target, tensors)
    header = {"format": FORMAT, "version": VERSION, "kind": kind,
              "name": getattr(m, "original_name", None) or getattr(m, "name", "forward"),
              "training": bool(holder.training), "methods": graphs, "modules": modules,
              "parameters": parameters,
              "requires_grad": [k for k, t in tensors.items() if t.requires_grad]}
    write_archive(f, _PREFIX, "graph.json", header, {k: t.detach() for k, t in tensors.items()},
                  _extra_files)


def write_archive(f, prefix, header_name, header, tensors, extra_files):
    """A zip at ``f`` (a path or a binary file) of ``header`` as JSON (``prefix + header_name``),
    ``tensors`` as an ``ember.save`` archive (``prefix + "tensors.pt"``) and each of
    ``extra_files`` (name -> str or bytes) under ``prefix + "extra/"``: ember.jit's and
    ember.export's file formats."""
    import ember
    buffer = io.BytesIO()
    ember.save(tensors, buffer)
    own = not hasattr(f, "write")
    handle = open(os.fspath(f), "wb") if own else f
    try:
        with zipfile.ZipFile(handle, "w") as archive:
            archive.writestr(prefix + header_name, json.dumps(header, indent=1))
            archive.writestr(prefix + "tensors.pt", buffer.getvalue())
            for name, content in (extra_files or {}).items():
                data = content.encode() if isinstance(content, str) else bytes(content)
                archive.writestr(prefix + "extra/" + name, data)
    finally:
        if own:
            handle.close()


def read_archive(f, prefix, header_name, foreign, extra_files=None):
    """(header, the tensors archive's bytes) of a zip written by ``write_archive``; the stored
    contents (bytes, b"" where missing) of the names in the dict ``extra_files`` are filled in.
    ``foreign`` is the message of the RuntimeError for a zip without ``prefix + header_name``."""
    own = not hasattr(f, "read")
    handle = open(os.fspath(f), "rb") if own else f
    try:
        with zipfile.ZipFile(handle) as archive:
            names = archive.namelist()
            if prefix + header_name not in names:
                raise RuntimeError(foreign)
            header = json.loads(archive.read(prefix + header_name))
            data = archive.read(prefix + "tensors.pt")
            if extra_files is not None:
                for name in list(extra_files):
                    key = prefix + "extra/" + name
                    extra_files[name] = archive.read(key) if key in names else b""
    finally:
        if own:
            handle.close()
    return header, data


def _is_parameter(module, target):
    *path, name = target.split(".")
    owner = module.get_submodule(".".join(path)) if path else module
    return name in owner._parameters


def _fetch(module, target):
    obj = module
    for atom in target.split("."):
        obj = getattr(obj, atom)
    return obj


def load(f, map_location=None, _extra_files=None):
    """Load a module or function saved by ``ember.jit.save`` (or ``TracedModule.save``) from
    ``f``, a path or a binary file. ``map_location`` is ``ember.load``'s; ``_extra_files``
    (a dict of names) is filled in with the stored extra files' contents (bytes).
    TorchScript files (from ``torch.jit.save``) cannot be read: ember has no TorchScript."""
    import ember
    from ..nn import Parameter
    from ._trace import ScriptFunction, TopLevelTracedModule, TracedMethod
    if not hasattr(f, "read") and not os.path.exists(os.fspath(f)):
        raise ValueError(f"The provided filename {os.fspath(f)} does not exist")
    header, data = read_archive(
        f, _PREFIX, "graph.json", "ember.jit.load: not a file written by ember.jit.save "
        "(TorchScript files from torch.jit.save cannot be read: ember has no TorchScript)",
        _extra_files)
    if header.get("format") != FORMAT or header.get("version", 0) > VERSION:
        raise RuntimeError(f"ember.jit.load: unsupported trace format "
                           f"{header.get('format')!r} version {header.get('version')!r}")
    stored = ember.load(io.BytesIO(data), map_location=map_location, weights_only=True)
    for key in header["requires_grad"]:
        stored[key].requires_grad_(True)
    tensors = {k: (_as_parameter(t, Parameter) if k in header["parameters"] else t)
               for k, t in stored.items()}
    modules = {path: _decode_module(spec, tensors) for path, spec in header["modules"].items()}
    graph_modules = {}
    for method, nodes in header["methods"].items():
        graph = _decode_graph(nodes)
        attrs = {}
        for node in graph.nodes:
            if node.op == "get_attr":
                attrs[node.target] = tensors[node.target]
            elif node.op == "call_module":
                attrs[node.target] = modules[node.target]
        cls = TopLevelTracedModule if method == "forward" and header["kind"] == "module" else \
            GraphModule
        kw = {"original_name": header["name"]} if cls is TopLevelTracedModule else {}
        gm = cls(attrs, graph, header["name"], **kw)
        gm.train(header["training"])
        graph_modules[method] = gm
    if header["kind"] == "function":
        return ScriptFunction(header["name"], graph_modules["forward"])
    traced = graph_modules["forward"]
    for method, gm in graph_modules.items():
        if method != "forward":
            traced._traced_methods[method] = TracedMethod(method, gm)
    return traced



