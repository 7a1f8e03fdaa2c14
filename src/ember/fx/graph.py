"""``Graph``: the intermediate representation of ember.fx, a doubly linked list of ``Node``s."""
import copy
import inspect
import warnings

from . import _codegen
from ._names import snake_case
from ._namespace import _Namespace
from .node import Node, _check_op_target, map_arg

__all__ = ["Graph", "PythonCode"]

PythonCode = _codegen.PythonCode


class _node_list:
    """A view of a graph's nodes in order (or reversed), with ``len``."""

    def __init__(self, graph, direction="_next"):
        self.graph = graph
        self.direction = direction

    def __len__(self):
        return self.graph._len

    def __iter__(self):
        root = self.graph._root
        cur = getattr(root, self.direction)
        while cur is not root:
            if not cur._erased:
                yield cur
            cur = getattr(cur, self.direction)

    def __reversed__(self):
        return _node_list(self.graph, "_next" if self.direction == "_prev" else "_prev")


class _InsertPoint:
    def __init__(self, graph, new_insert):
        self.graph = graph
        self.orig_insert, graph._insert = graph._insert, new_insert

    def __enter__(self):
        pass

    def __exit__(self, type, value, tb):
        self.graph._insert = self.orig_insert


class Graph:
    """The main data structure of ember.fx: a series of ``Node``s, each an operation (placeholder,
    get_attr, call_function, call_method, call_module, output), in the order they run.
    ``str(graph)`` prints it; ``python_code`` turns it into the source of a ``forward``."""

    def __init__(self, owning_module=None, tracer_cls=None, tracer_extras=None):
        self._root = Node(self, "", "root", "", (), {})
        self._insert = self._root.prepend
        self._len = 0
        self._graph_namespace = _Namespace()
        self._owning_module = owning_module
        self._tracer_cls = tracer_cls
        self._tracer_extras = tracer_extras

    @property
    def owning_module(self):
        """The GraphModule this graph belongs to, if any."""
        return self._owning_module

    @owning_module.setter
    def owning_module(self, mod):
        self._owning_module = mod

    @property
    def nodes(self):
        """The nodes of the graph, in order: iterate, ``reversed()`` or ``len()``."""
        return _node_list(self)

    def find_nodes(self, *, op, target=None, sort=True):
        """The nodes with this ``op`` (and ``target``, when given)."""
        return [n for n in self.nodes if n.op == op and (target is None or n.target == target)]

    # -- creating nodes ------------------------------------------------------------------------
    def create_node(self, op, target, args=None, kwargs=None, name=None, type_expr=None):
        """Create a Node and insert it at the current insert point (by default the end of the
        graph); ``name`` defaults to one derived from ``target``, made unique."""
        args = () if args is None else args
        kwargs = {} if kwargs is None else kwargs
        if not isinstance(args, tuple):
            raise TypeError(f"args must be a tuple, got {type(args).__name__}")
        if not isinstance(kwargs, dict):
            raise TypeError(f"kwargs must be a dict, got {type(kwargs).__name__}")
        candidate = name if name is not None else self._target_to_str(target)
        _check_op_target(self, candidate, op, target)
        name = self._graph_namespace.create_name(candidate, None)
        n = Node(self, name, op, target, args, kwargs, type_expr)
        self._graph_namespace.associate_name_with_obj(name, n)
        self._insert(n)
        self._len += 1
        return n

    @staticmethod
    def _target_to_str(target):
        if callable(target) and hasattr(target, "__name__"):
            op = target.__name__
        else:
            if not isinstance(target, str):
                raise TypeError(f"target must be a str or a callable, got {type(target).__name__}")
            op = target
            if op.startswith("__") and op.endswith("__") and len(op) > 4:
                op = op[2:-2]
        return snake_case(op)

    def placeholder(self, name, type_expr=None, default_value=inspect.Signature.empty):
        """Insert a placeholder node: an input of the function."""
        args = () if default_value is inspect.Signature.empty else (default_value,)
        return self.create_node("placeholder", name, args=args, type_expr=type_expr)

    def get_attr(self, qualified_name, type_expr=None):
        """Insert a get_attr node: fetch ``qualified_name`` from the owning module."""
        module = self.owning_module
        if module is not None:
            try:
                _fetch_attr(module, qualified_name)
            except AttributeError:
                warnings.warn("Attempted to insert a get_attr Node with no underlying reference in "
                              "the owning GraphModule! Call GraphModule.add_submodule to add the "
                              "necessary submodule, GraphModule.add_parameter to add the necessary "
                              "Parameter, or nn.Module.register_buffer to add the necessary buffer",
                              stacklevel=2)
        return self.create_node("get_attr", qualified_name, type_expr=type_expr)

    def call_module(self, module_name, args=None, kwargs=None, type_expr=None):
        """Insert a call_module node: apply the submodule ``module_name`` to args and kwargs."""
        module = self.owning_module
        if module is not None:
            try:
                module.get_submodule(module_name)
            except AttributeError:
                warnings.warn("Attempted to insert a call_module Node with no underlying reference "
                              "in the owning GraphModule! Call GraphModule.add_submodule to add "
                              "the necessary submodule", stacklevel=2)
        return self.create_node("call_module", module_name, args, kwargs, type_expr=type_expr)

    def call_method(self, method_name, args=None, kwargs=None, type_expr=None):
        """Insert a call_method node: call ``args[0].method_name(*args[1:], **kwargs)``."""
        return self.create_node("call_method", method_name, args, kwargs, type_expr=type_expr)

    def call_function(self, the_function, args=None, kwargs=None, type_expr=None):
        """Insert a call_function node: ``the_function(*args, **kwargs)``."""
        return self.create_node("call_function", the_function, args, kwargs, type_expr=type_expr)

    def output(self, result, type_expr=None):
        """Insert the output node: the function returns ``result``."""
        return self.create_node(op="output", target="output", args=(result,), type_expr=type_expr)

    def node_copy(self, node, arg_transform=lambda x: x):
        """Copy ``node`` (of another graph) into this one; ``arg_transform`` maps the nodes its
        arguments refer to onto nodes of this graph."""
        args = map_arg(node.args, arg_transform)
        kwargs = map_arg(node.kwargs, arg_transform)
        result = self.create_node(node.op, node.target, args, kwargs, node.name, node.type)
        result.meta = copy.copy(node.meta)
        return result

    def graph_copy(self, g, val_map, return_output_node=False):
        """Copy all nodes of ``g`` into this graph, except its output; ``val_map`` maps ``g``'s
        nodes to this graph's and is filled in. Returns the value ``g`` would output."""
        for node in g.nodes:
            if node in val_map:
                continue
            if node.op == "output":
                rv = map_arg(node.args[0], lambda n: val_map[n])
                return (rv, node) if return_output_node else rv
            val_map[node] = self.node_copy(node, lambda n: val_map[n])
        return None

    def __deepcopy__(self, memo=None):
        memo = memo if memo else {}
        g = Graph(tracer_cls=self._tracer_cls)
        output_vals = g.graph_copy(self, val_map=memo, return_output_node=True)
        if output_vals is not None:
            out_val, old_output = output_vals
            new_output = g.output(out_val, type_expr=getattr(old_output, "type", None))
            new_output.meta = copy.copy(old_output.meta)
        return g

    # -- changing the graph --------------------------------------------------------------------
    def erase_node(self, to_erase):
        """Erase ``to_erase``, which must have no users left."""
        if len(to_erase.users) > 0:
            raise RuntimeError(f"Tried to erase Node {to_erase} but it still had "
                               f"{len(to_erase.users)} users in the graph: {to_erase.users}!")
        if to_erase.graph is not self:
            raise RuntimeError(f"Attempting to remove {to_erase} from wrong graph!")
        if to_erase._erased:
            warnings.warn(f"erase_node({to_erase}) on an already erased node", stacklevel=2)
            return
        to_erase._remove_from_list()
        to_erase._erased = True
        self._len -= 1
        to_erase._update_args_kwargs(map_arg(to_erase._args, lambda n: None),
                                     map_arg(to_erase._kwargs, lambda n: None))

    def inserting_before(self, n=None):
        """Context manager: nodes created inside it are inserted before ``n`` (at the start of
        the graph when ``n`` is None)."""
        if n is None:
            return self.inserting_after(self._root)
        if n.graph is not self:
            raise ValueError("Node to insert before is not in graph.")
        return _InsertPoint(self, n.prepend)

    def inserting_after(self, n=None):
        """Context manager: nodes created inside it are inserted after ``n``, each after the
        previous one (at the end of the graph when ``n`` is None)."""
        if n is None:
            return self.inserting_before(self._root)
        if n.graph is not self:
            raise ValueError("Node to insert after is not in graph.")
        return _InsertPoint(self, n.append)

    def eliminate_dead_code(self, is_impure_node=None):
        """Remove the nodes whose results nothing uses and that have no side effects (see
        ``Node.is_impure``). Returns whether the graph changed."""
        self.lint()
        changed = False
        for node in reversed(self.nodes):
            impure = is_impure_node(node) if is_impure_node is not None else node.is_impure()
            if not impure and len(node.users) == 0:
                self.erase_node(node)
                changed = True
        return changed

    # -- checks and output ---------------------------------------------------------------------
    def lint(self):
        """Check the graph's invariants: every node belongs to it, arguments are defined before
        use, users match uses, names are unique, and with an owning module, every get_attr and
        call_module target exists. Raises RuntimeError naming the first problem."""
        def check_arg(arg, n=None):
            context_str = f" of Node '{n}' " if n else " "
            if arg.graph is not self:
                raise RuntimeError(f"Argument '{arg}'{context_str}does not belong to this Graph, but "
                                   f"was used as an argument! If you are copying nodes from another "
                                   f"graph, make sure to use ``arg_transform`` on node_copy() to remap "
                                   f"values\n{self}")
            if arg not in seen_values:
                raise RuntimeError(f"Argument '{arg}'{context_str}was used before it has been "
                                   f"defined! Please check that Nodes in the graph are "
                                   f"topologically ordered\n{self}")

        seen_names = set()
        seen_values = set()
        for node in self.nodes:
            if node.op not in ("placeholder", "call_method", "call_module", "call_function",
                               "get_attr", "output"):
                raise RuntimeError(f"Node {node} had unknown opcode {node.op}!")
            if node.graph is not self:
                raise RuntimeError(f"Node '{node}' does not belong to this Graph!")
            for arg in node._input_nodes:
                check_arg(arg, node)
                if node not in arg.users:
                    raise RuntimeError(f"Node '{node}' uses '{arg}' but is not among its users")
            for user in node.users:
                if node not in user._input_nodes:
                    raise RuntimeError(f"Node '{user}' is listed as a user of '{node}' but does "
                                       f"not use it")
            seen_values.add(node)
            if node.name in seen_names:
                raise RuntimeError(f"Node redefined name {node.name}!")
            seen_names.add(node.name)

        if self.owning_module:
            for node in self.nodes:
                if node.op not in ("get_attr", "call_module"):
                    continue
                if not isinstance(node.target, str):
                    raise RuntimeError(f"Node {node} target {node.target} has type "
                                       f"{type(node.target).__name__} but a str is expected")
                target_atoms = node.target.split(".")
                m_itr = self.owning_module
                for i, atom in enumerate(target_atoms):
                    new_m_itr = getattr(m_itr, atom, None)
                    seen_qualname = ".".join(target_atoms[:i])
                    if new_m_itr is None:
                        raise RuntimeError(f"Node {node} target {node.target} references "
                                           f"nonexistent attribute {atom} of {seen_qualname}")
                    if node.op == "call_module" and not _is_module(new_m_itr):
                        raise RuntimeError(f"Node {node} target {node.target} {atom} of "
                                           f"{seen_qualname} does not reference an nn.Module")
                    m_itr = new_m_itr

    def python_code(self, root_module, *, verbose=False, **kwargs):
        """The Python source of this graph as a ``forward(root_module, ...)`` method, and its
        globals (a ``PythonCode``)."""
        return _codegen.generate(self, root_module, verbose=verbose)

    def process_inputs(self, *args):
        """The inputs the generated code receives for ``args`` (unchanged)."""
        return args

    def process_outputs(self, out):
        """The result the generated code returns for ``out`` (unchanged)."""
        return out

    def __str__(self):
        maybe_return_typename = [""]
        node_strs = [node.format_node(None, maybe_return_typename) for node in self.nodes]
        s = f"graph(){maybe_return_typename[0]}:"
        for node_str in node_strs:
            if node_str:
                s += "\n    " + node_str
        return s

    def print_tabular(self):
        """Print the nodes as a table (opcode, name, target, args, kwargs), in the layout of
        torch.fx's ``print_tabular``."""
        rows = [[n.op, n.name, n.target, n.args, n.kwargs] for n in self.nodes]
        print(_tabulate(rows, ["opcode", "name", "target", "args", "kwargs"]))


def _tabulate(rows, headers):
    """The plain table of the ``tabulate`` package's default format: columns left-aligned and
    separated by two spaces, a dashed rule under the headers."""
    cells = [[str(c) for c in row] for row in rows]
    widths = [max([len(h) + 2] + [len(row[i]) for row in cells]) for i, h in enumerate(headers)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(headers, widths)).rstrip(),
             "  ".join("-" * w for w in widths)]
    lines += ["  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() for row in cells]
    return "\n".join(lines)


def _is_module(obj):
    from ..nn import Module
    return isinstance(obj, Module)


def _fetch_attr(module, target):
    obj = module
    for atom in target.split("."):
        obj = getattr(obj, atom)
    return obj
