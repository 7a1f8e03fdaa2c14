"""``GraphModule``: a Module built from a Graph, whose ``forward`` is Python code generated from
the graph."""
import copy
import itertools
import linecache
import warnings
from pathlib import Path

from ..nn import Module, Parameter
from .graph import Graph

__all__ = ["GraphModule"]

_next_id = itertools.count()


def _exec_with_source(src, globals_):
    """exec ``src`` under a fresh file name that linecache knows, so tracebacks through the
    generated code show its lines."""
    key = f"<eval_with_key>.{next(_next_id)}"
    linecache.cache[key] = (len(src), None, src.splitlines(True), key)
    exec(compile(src, key, "exec"), globals_)


def _forward_from_src(src, globals_):
    globals_copy = dict(globals_)
    _exec_with_source(src, globals_copy)
    forward_fn = globals_copy["forward"]
    del globals_copy["forward"]
    return forward_fn


def _copy_attr(from_module, to_module, target):
    """Copy the attribute ``target`` (a qualified name) of ``from_module`` into ``to_module``,
    making the plain ``Module``s that hold it on the way. A tensor that is not a Parameter
    becomes a buffer (a registered buffer keeps its ``persistent`` flag)."""
    *prefix, field = target.split(".")
    for item in prefix:
        f = getattr(from_module, item)
        t = getattr(to_module, item, None)
        if f is t:
            return
        if t is None:
            t = Module()
            setattr(to_module, item, t)
        from_module, to_module = f, t
    orig = getattr(from_module, field)
    from .. import Tensor
    if isinstance(orig, Tensor) and not isinstance(orig, Parameter):
        persistent = field not in getattr(from_module, "_non_persistent_buffers_set", ())
        to_module.register_buffer(field, orig, persistent=persistent)
    else:
        setattr(to_module, field, orig)


def _assign_attr(from_obj, to_module, target):
    *prefix, field = target.split(".")
    for item in prefix:
        t = getattr(to_module, item, None)
        if t is None:
            t = Module()
            setattr(to_module, item, t)
        to_module = t
    from .. import Tensor
    if isinstance(from_obj, Tensor) and not isinstance(from_obj, Parameter):
        to_module.register_buffer(field, from_obj)
    else:
        setattr(to_module, field, from_obj)


def _addindent(s_, num_spaces):
    s = s_.split("\n")
    if len(s) == 1:
        return s_
    first = s.pop(0)
    return first + "\n" + "\n".join((num_spaces * " ") + line for line in s)


class GraphModule(Module):
    """A Module generated from a Graph: it has ``graph``, ``code`` (the source of its
    ``forward``, generated from the graph) and the parameters, buffers and submodules the graph
    refers to, copied from ``root``. Call ``recompile()`` after changing ``graph`` in place."""

    def __new__(cls, *args, **kwargs):
        # each instance gets its own class, so that recompile can give it its own forward
        for t in cls.__mro__:
            if t.__qualname__.split(".")[-1] != "GraphModuleImpl":
                cls = t
                break

        class GraphModuleImpl(cls):
            pass

        return super().__new__(GraphModuleImpl)

    def __init__(self, root, graph, class_name="GraphModule"):
        super().__init__()
        self.__class__.__name__ = class_name
        if isinstance(root, Module):
            self.training = root.training
            for node in graph.nodes:
                if node.op in ("get_attr", "call_module"):
                    _copy_attr(root, self, node.target)
        elif isinstance(root, dict):
            targets_to_copy = []
            for node in graph.nodes:
                if node.op in ("get_attr", "call_module"):
                    if node.target not in root:
                        raise RuntimeError(f"Node {node} referenced target {node.target} but that "
                                           f"target was not provided in ``root``!")
                    targets_to_copy.append(node.target)
            targets_to_copy.sort(key=lambda t: t.count("."))
            for target in targets_to_copy:
                _assign_attr(root[target], self, target)
        else:
            raise RuntimeError(f"Unsupported type {type(root).__name__} passed for root! "
                               f"Expected an ember.nn.Module or a dict")
        self.meta = {}
        self.graph = graph

    @property
    def graph(self):
        """The Graph this module was generated from; assigning one recompiles the module."""
        return self._graph

    @graph.setter
    def graph(self, g):
        if not isinstance(g, Graph):
            raise TypeError(f"Expected a Graph instance, but got {type(g).__name__}")
        self._graph = g
        g.owning_module = self
        self.recompile()

    @property
    def code(self):
        """The Python source of ``forward``, generated from ``graph``."""
        if not hasattr(self, "_code"):
            raise RuntimeError("Code has not been generated! Please report a bug to ember")
        return self._code

    def recompile(self):
        """Regenerate ``code`` and ``forward`` from ``graph`` (needed after changing the graph
        in place). Returns the ``PythonCode``."""
        python_code = self._graph.python_code(root_module="self")
        self._code = python_code.src
        self._lineno_map = python_code._lineno_map
        type(self).forward = _forward_from_src(self._code, python_code.globals)
        return python_code

    def print_readable(self, print_output=True, include_stride=False, include_device=False,
                       colored=False):
        """The generated code as a class definition (with nested GraphModule submodules);
        printed unless ``print_output`` is False, and returned."""
        src = self._graph.python_code(root_module="self", verbose=True).src
        src = src.lstrip("\n").rstrip(" ")
        module_code = _addindent(f"class {self._get_name()}(ember.nn.Module):\n" + src, 4)
        module_code = "\n".join(line.rstrip() if not line.strip() else line
                                for line in module_code.split("\n"))
        submodule_code_list = [""]
        for submodule in self.children():
            if isinstance(submodule, GraphModule):
                submodule_code_list.append(submodule.print_readable(print_output=False))
        submodule_code = _addindent("\n".join(submodule_code_list), 4)
        output = module_code + submodule_code
        if print_output:
            print(output)
        return output

    def _get_name(self):
        return type(self).__name__

    def __str__(self):
        orig_str = super().__str__()
        return "\n".join([orig_str, self._code,
                          "# To see more debug info, please use `graph_module.print_readable()`"])

    def __repr__(self):
        return super().__repr__()

    # -- submodules ----------------------------------------------------------------------------
    def add_submodule(self, target, m):
        """Add the submodule ``m`` at the qualified name ``target``, creating the plain Modules on
        the way. Returns False if a non-Module attribute is in the way."""
        *prefix, field = target.split(".")
        mod = self
        for item in prefix:
            submod = getattr(mod, item, None)
            if submod is None:
                submod = Module()
                setattr(mod, item, submod)
            if not isinstance(submod, Module):
                return False
            mod = submod
        mod.add_module(field, m)
        return True

    def delete_submodule(self, target):
        """Delete the submodule ``target``; False if there is none (or it is not a Module)."""
        atoms = target.split(".")
        path, target_submod = atoms[:-1], atoms[-1]
        mod = self
        for item in path:
            if not hasattr(mod, item):
                return False
            mod = getattr(mod, item)
            if not isinstance(mod, Module):
                return False
        if not hasattr(mod, target_submod):
            return False
        if not isinstance(getattr(mod, target_submod), Module):
            return False
        delattr(mod, target_submod)
        return True

    def delete_all_unused_submodules(self):
        """Delete the submodules that no call_module or get_attr node of the graph uses."""
        used = set()
        for node in self.graph.nodes:
            if node.op in ("call_module", "get_attr"):
                atoms = node.target.split(".")
                for i in range(1, len(atoms) + 1):
                    used.add(".".join(atoms[:i]))
                if node.op == "call_module":
                    try:
                        submod = self.get_submodule(node.target)
                    except AttributeError:
                        continue
                    for name, _ in submod.named_modules():
                        if name:
                            used.add(".".join([node.target, name]))
        to_delete = [name for name, _ in self.named_modules() if name and name not in used]
        for name in to_delete:
            self.delete_submodule(name)

    # -- copying and saving --------------------------------------------------------------------
    def __deepcopy__(self, memo):
        res = type(self).__new__(type(self))
        memo[id(self)] = res
        fake_mod = Module()
        fake_mod.__dict__ = copy.deepcopy(self.__dict__, memo)
        GraphModule.__init__(res, fake_mod, fake_mod.__dict__["_graph"], type(self).__name__)
        res.meta = copy.deepcopy(getattr(self, "meta", {}), memo)
        return res

    def __copy__(self):
        res = GraphModule(self, self.graph, type(self).__name__)
        res.meta = getattr(self, "meta", {})
        return res

    def to_folder(self, folder, module_name="FxModule"):
        """Write this module to ``folder`` as an importable package: ``module.py`` (a class
        ``module_name`` with the generated ``forward``), ``state_dict.pt``, and a ``.pt`` file
        for each submodule whose constructor cannot be written out."""
        import ember
        from .. import nn
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        state = self.state_dict()
        non_persistent = [name for name, b in self._buffers.items()
                          if b is not None and name in self._non_persistent_buffers_set]
        for name in non_persistent:
            state[name] = self._buffers[name]
        ember.save(state, folder / "state_dict.pt")
        tab = " " * 4
        model_str = f"""
import ember
from math import inf
from math import nan
NoneType = type(None)
from ember import device

from ember.nn import *
class {module_name}(ember.nn.Module):
    def __init__(self):
        super().__init__()
"""
        safe_reprs = (nn.Linear, nn.Conv1d, nn.Conv2d, nn.Conv3d, nn.BatchNorm1d, nn.BatchNorm2d,
                      nn.BatchNorm3d)
        blobified_modules = []
        for name, module in self.named_children():
            if type(module) in safe_reprs:
                module_str = repr(module)
            else:
                module_file = folder / f"{name}.pt"
                ember.save(module, module_file)
                blobified_modules.append(name)
                module_repr = repr(module).replace("\r", " ").replace("\n", " ")
                model_str += f"{tab * 2}# {module_repr}\n"
                module_str = f"ember.load(r'{module_file}', weights_only=False)"
            model_str += f"{tab * 2}setattr(self, {name!r}, {module_str})\n"
        for buffer_name, buffer in self._buffers.items():
            if buffer is None:
                continue
            persistent = buffer_name not in non_persistent
            model_str += (f"{tab * 2}self.register_buffer('{buffer_name}', ember.empty("
                          f"{list(buffer.shape)}, dtype={buffer.dtype}), persistent={persistent})\n")
        for param_name, param in self._parameters.items():
            if param is None:
                continue
            model_str += (f"{tab * 2}self.{param_name} = ember.nn.Parameter(ember.empty("
                          f"{list(param.shape)}, dtype={param.dtype}))\n")
        model_str += f"{tab * 2}state = ember.load(r'{folder / 'state_dict.pt'}')\n"
        model_str += f"{tab * 2}self.load_state_dict(state, strict=False)\n"
        for name in non_persistent:
            model_str += f"{tab * 2}self.{name}.copy_(state[{name!r}])\n"
        model_str += f"{_addindent(self.code, 4)}\n"
        (folder / "module.py").write_text(model_str)
        (folder / "__init__.py").write_text("from .module import *")
        if blobified_modules:
            warnings.warn(f"Was not able to save the following children modules as reprs - saved "
                          f"as pickled files instead: {blobified_modules}", stacklevel=2)
