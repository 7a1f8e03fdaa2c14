"""``Node``: one operation of a ``Graph``, and the helpers that map over its arguments."""
import math
import warnings

from ._names import qualified_name
from .immutable_collections import immutable_dict, immutable_list

__all__ = ["Node", "map_arg", "map_aggregate", "has_side_effect"]

_legal_ops = ("placeholder", "call_method", "call_module", "call_function", "get_attr", "output",
              "root")

# call_function targets that eliminate_dead_code keeps although nothing uses their result
_side_effectful_functions = set()


def has_side_effect(fn):
    """Marks ``fn`` as having a side effect, so that ``Graph.eliminate_dead_code`` keeps its calls
    even when their results are unused. Returns ``fn``."""
    _side_effectful_functions.add(fn)
    return fn


def _type_repr(obj):
    """How a type annotation prints (``int``, ``ember.Tensor``, ``typing.List[int]``)."""
    if isinstance(obj, type):
        if obj.__module__ == "builtins":
            return obj.__qualname__
        return qualified_name(obj) if obj.__module__.startswith("ember") else \
            f"{obj.__module__}.{obj.__qualname__}"
    if obj is ...:
        return "..."
    return repr(obj)


def _format_arg(arg, max_list_len=math.inf):
    if isinstance(arg, list):
        items = ", ".join(_format_arg(a) for idx, a in enumerate(arg) if idx < max_list_len)
        maybe_len = "" if len(arg) < max_list_len + 1 else f", ...[total_len={len(arg)}]"
        return f"[{items}{maybe_len}]"
    if isinstance(arg, tuple):
        items = ", ".join(_format_arg(a) for idx, a in enumerate(arg) if idx < max_list_len)
        maybe_len = "" if len(arg) < max_list_len + 1 else f", ...[total_len={len(arg)}]"
        maybe_comma = "," if len(arg) == 1 else ""
        return f"({items}{maybe_comma}{maybe_len})"
    if isinstance(arg, dict):
        items_str = ", ".join(f"{k}: {_format_arg(v)}" for k, v in arg.items())
        return f"{{{items_str}}}"
    if isinstance(arg, Node):
        return "%" + str(arg)
    return str(arg)


def _check_op_target(graph, name, op, target):
    if op not in _legal_ops:
        raise ValueError(f"Node '{name}': op '{op}' is not one of {', '.join(_legal_ops)}")
    if op == "call_function":
        if not callable(target):
            raise ValueError(f"Node [graph = {graph}, name = '{name}'] target {target} has type "
                             f"{type(target).__name__} but a Callable is expected")
    elif not isinstance(target, str):
        raise ValueError(f"Node [graph = {graph}, name = '{name}'] target {target} has type "
                         f"{type(target).__name__} but a str is expected")


class Node:
    """A node of a ``Graph``: one operation. ``op`` is one of

    - ``placeholder``: a function input; ``target`` is the argument's name, ``args`` holds its
      default value, if any.
    - ``get_attr``: fetches a parameter, buffer or submodule; ``target`` is its qualified name.
    - ``call_function``: applies the callable ``target`` to ``args``/``kwargs``.
    - ``call_module``: applies the submodule named ``target`` to ``args``/``kwargs``.
    - ``call_method``: calls the method named ``target`` on ``args[0]`` with the rest.
    - ``output``: the return value of the traced function, ``args[0]``.
    """

    def __init__(self, graph, name, op, target, args, kwargs, return_type=None):
        _check_op_target(graph, name, op, target)
        self.graph = graph
        self.name = name
        self.op = op
        self.target = target
        self._input_nodes = {}
        self.users = {}
        self.type = return_type
        self._prev = self
        self._next = self
        self._erased = False
        self._args = ()
        self._kwargs = immutable_dict()
        self.meta = {}
        self._update_args_kwargs(args, kwargs)

    # -- position in the graph -----------------------------------------------------------------
    @property
    def next(self):
        """The next node in the graph's list of nodes."""
        return self._next

    @property
    def prev(self):
        """The previous node in the graph's list of nodes."""
        return self._prev

    def prepend(self, x):
        """Insert ``x`` before this node in the list of nodes in the graph (moving it if it is
        already in the graph)."""
        if self.graph is not x.graph:
            raise RuntimeError("Attempting to move a Node into a different Graph")
        if self is x:
            warnings.warn("Trying to prepend a node to itself. This behavior has no effect on the "
                          "graph.", stacklevel=2)
            return
        x._remove_from_list()
        p = self._prev
        p._next, x._prev = x, p
        x._next, self._prev = self, x

    def append(self, x):
        """Insert ``x`` after this node in the list of nodes in the graph."""
        self._next.prepend(x)

    def _remove_from_list(self):
        p, n = self._prev, self._next
        p._next, n._prev = n, p

    # -- arguments -----------------------------------------------------------------------------
    @property
    def args(self):
        """The tuple of arguments to this node; assigning it updates the users of the nodes it
        refers to."""
        return self._args

    @args.setter
    def args(self, a):
        self._update_args_kwargs(a, self._kwargs)

    @property
    def kwargs(self):
        """The dict of keyword arguments to this node; assigning it updates the users."""
        return self._kwargs

    @kwargs.setter
    def kwargs(self, k):
        self._update_args_kwargs(self._args, k)

    @property
    def all_input_nodes(self):
        """The nodes this node's args and kwargs refer to, in order, without duplicates."""
        return list(self._input_nodes)

    def update_arg(self, idx, arg):
        """Set ``args[idx] = arg``."""
        args = list(self.args)
        args[idx] = arg
        self.args = tuple(args)

    def insert_arg(self, idx, arg):
        """Insert ``arg`` at position ``idx`` of ``args``."""
        args = list(self.args)
        args.insert(idx, arg)
        self.args = tuple(args)

    def update_kwarg(self, key, arg):
        """Set ``kwargs[key] = arg``."""
        kwargs = dict(self.kwargs)
        kwargs[key] = arg
        self.kwargs = kwargs

    def _update_args_kwargs(self, new_args, new_kwargs):
        if not isinstance(new_args, tuple):
            raise TypeError(f"Node args must be a tuple, got {type(new_args).__name__}")
        if not isinstance(new_kwargs, dict):
            raise TypeError(f"Node kwargs must be a dict, got {type(new_kwargs).__name__}")
        for old_use in self._input_nodes:
            old_use.users.pop(self, None)
        input_nodes = self._input_nodes = {}

        def register(n):
            input_nodes.setdefault(n)
            return n

        self._args = map_arg(new_args, register)
        self._kwargs = map_arg(new_kwargs, register)
        for new_use in self._input_nodes:
            new_use.users.setdefault(self)

    @property
    def stack_trace(self):
        """The Python stack trace recorded when this node was traced (None unless the tracer
        records stack traces)."""
        return self.meta.get("stack_trace", None)

    @stack_trace.setter
    def stack_trace(self, trace):
        self.meta["stack_trace"] = trace

    # -- rewriting -----------------------------------------------------------------------------
    def replace_all_uses_with(self, replace_with, delete_user_cb=lambda user: True, *,
                              propagate_meta=False):
        """Replace all uses of this node in the graph by ``replace_with``; ``delete_user_cb``
        chooses which users to change. Returns the list of users that were changed."""
        if propagate_meta:
            if replace_with.meta:
                raise RuntimeError("Called node.replace_all_uses_with(replace_with, "
                                   "propagate_meta=True), but replace_with already has .meta keys")
            replace_with.meta.update(self.meta)
        to_process = list(self.users)
        changed = []
        for use_node in to_process:
            if not delete_user_cb(use_node):
                continue
            def maybe_replace(n):
                return replace_with if n is self else n
            use_node._update_args_kwargs(map_arg(use_node.args, maybe_replace),
                                         map_arg(use_node.kwargs, maybe_replace))
            changed.append(use_node)
        return changed

    def replace_input_with(self, old_input, new_input):
        """Replace the input ``old_input`` of this node by ``new_input``."""
        def maybe_replace(n):
            return new_input if n is old_input else n
        self._update_args_kwargs(map_arg(self.args, maybe_replace), map_arg(self.kwargs, maybe_replace))

    def is_impure(self):
        """True for a node that dead-code elimination must keep although nothing uses it:
        placeholders, the output, calls of side-effectful functions and of modules marked
        ``_is_impure``."""
        if self.op in ("placeholder", "output"):
            return True
        if self.op == "call_function":
            return self.target in _side_effectful_functions
        if self.op == "call_module":
            module = self.graph.owning_module
            if module is None:
                return False
            try:
                target = module.get_submodule(self.target)
            except AttributeError:
                return False
            return bool(getattr(target, "_is_impure", False))
        return False

    # -- printing ------------------------------------------------------------------------------
    def __repr__(self):
        return self.name

    @staticmethod
    def _pretty_print_target(target):
        if isinstance(target, str):
            return target
        module = getattr(target, "__module__", None)
        name = getattr(target, "__name__", None)
        if name is not None:
            if module == "builtins":
                return f"builtins.{name}"
            if module == "_operator":
                return f"operator.{name}"
        return qualified_name(target)

    def format_node(self, placeholder_names=None, maybe_return_typename=None):
        """A descriptive string of this node, as printed by ``str(graph)``:
        ``%linear : [num_users=1] = call_module[target=linear](args = (%x,), kwargs = {})``."""
        if self.op == "placeholder":
            arg_str = self.target
            if self.type:
                arg_str += f": {_type_repr(self.type)}"
            if placeholder_names is not None:
                placeholder_names.append(arg_str)
                return None
            maybe_typename = f"{_type_repr(self.type)} " if self.type else ""
            default_val = "(default=" + str(self.args[0]) + ")" if self.args else ""
            return (f"%{self.name} : {maybe_typename}[num_users={len(self.users)}] = "
                    f"{self.op}[target={self.target}]{default_val}")
        maybe_typename = f"{_type_repr(self.type)} " if self.type is not None else ""
        if self.op == "get_attr":
            return (f"%{self.name} : {maybe_typename}[num_users={len(self.users)}] = "
                    f"{self.op}[target={self._pretty_print_target(self.target)}]")
        if self.op == "output":
            if self.type and maybe_return_typename is not None:
                maybe_return_typename[0] = f" -> {_type_repr(self.type)}"
            return f"return {self.args[0]}"
        return (f"%{self.name} : {maybe_typename}[num_users={len(self.users)}] = "
                f"{self.op}[target={self._pretty_print_target(self.target)}]("
                f"args = {_format_arg(self.args)}, kwargs = {_format_arg(self.kwargs)})")


def named_tuple_of(a, items):
    """A named tuple of ``a``'s type holding ``items`` (nodes of a graph), made without the
    checks its ``__new__`` makes on values (``PackedSequence`` asks where ``batch_sizes``
    is)."""
    make = getattr(type(a), "_make", None)
    return make(items) if make is not None else type(a)(*items)


def map_aggregate(a, fn):
    """Apply ``fn`` to every leaf of ``a``, a nest of tuples, lists, dicts and slices; lists and
    dicts come back immutable (``immutable_list``, ``immutable_dict``)."""
    if isinstance(a, tuple):
        t = tuple(map_aggregate(elem, fn) for elem in a)
        return named_tuple_of(a, t) if hasattr(a, "_fields") else t
    if isinstance(a, list):
        return immutable_list(map_aggregate(elem, fn) for elem in a)
    if isinstance(a, dict):
        rv = immutable_dict()
        for k, v in a.items():
            dict.__setitem__(rv, k, map_aggregate(v, fn))
        return rv
    if isinstance(a, slice):
        return slice(map_aggregate(a.start, fn), map_aggregate(a.stop, fn), map_aggregate(a.step, fn))
    return fn(a)


def map_arg(a, fn):
    """Apply ``fn`` to each Node appearing in ``a``, a nest of tuples, lists, dicts and slices."""
    if not callable(fn):
        raise TypeError("ember.fx.map_arg(a, fn): fn must be a callable")
    return map_aggregate(a, lambda x: fn(x) if isinstance(x, Node) else x)
