"""Python source of a Graph: ``def forward(self, x): ...`` with one line per node, in torch.fx's
layout (values set to None after their last use, operators written as operators)."""
import builtins
import enum

from ._names import is_from_ember, qualified_name
from ._namespace import _Namespace, custom_builtins
from .node import Node, _type_repr

__all__ = ["PythonCode", "generate"]

reflectable_magic_methods = {
    "add": "{} + {}", "sub": "{} - {}", "mul": "{} * {}", "floordiv": "{} // {}",
    "truediv": "{} / {}", "div": "{} / {}", "mod": "{} % {}", "pow": "{} ** {}",
    "lshift": "{} << {}", "rshift": "{} >> {}", "and_": "{} & {}", "or_": "{} | {}",
    "xor": "{} ^ {}", "getitem": "{}[{}]", "matmul": "{} @ {}",
}
magic_methods = dict({
    "eq": "{} == {}", "ne": "{} != {}", "lt": "{} < {}", "gt": "{} > {}", "le": "{} <= {}",
    "ge": "{} >= {}", "pos": "+{}", "neg": "-{}", "invert": "~{}"}, **reflectable_magic_methods)
inplace_methods = {
    "iadd": "{} += {}", "iand": "{} &= {}", "ifloordiv": "{} //= {}", "ilshift": "{} <<= {}",
    "imod": "{} %= {}", "imul": "{} *= {}", "imatmul": "{} @= {}", "ior": "{} |= {}",
    "ipow": "{} **= {}", "irshift": "{} >>= {}", "isub": "{} -= {}", "itruediv": "{} /= {}",
    "ixor": "{} ^= {}", "setitem": "{}[{}] = {}",
}


class PythonCode:
    """The source of a generated function and the globals it must run with."""

    def __init__(self, src, globals, lineno_map=None):
        self.src = src
        self.globals = globals
        self._lineno_map = lineno_map


def _format_target(base, target):
    r = base
    for elem in target.split("."):
        r = f'getattr({r}, "{elem}")' if not elem.isidentifier() else f"{r}.{elem}"
    return r


def generate(graph, root_module="self", *, verbose=False):
    """Generate the Python source of ``graph`` as a method ``forward(self, ...)``."""
    nodes = list(graph.nodes)
    namespace = _Namespace()
    for node in nodes:
        namespace.create_name(node.name, node)
    globals_ = {}
    wrapped_fns = {}

    def add_global(name_hint, obj):
        if is_from_ember(obj) and obj is not custom_builtins()["device"] and not isinstance(obj, type(builtins)):
            return qualified_name(obj)
        if getattr(builtins, name_hint, None) is obj:
            return name_hint
        name = namespace.create_name(name_hint, obj)
        globals_[name] = obj
        return name

    for name, obj in custom_builtins().items():
        namespace.create_name(name, obj)
        globals_[name] = obj

    def type_repr(o):
        if o == ():
            return "()"
        if isinstance(o, type):
            if o.__module__ == "builtins":
                return o.__qualname__
            return add_global(_type_repr(o), o)
        return repr(o)

    def get_repr(arg):
        if isinstance(arg, Node):
            return repr(arg)
        if isinstance(arg, tuple) and hasattr(arg, "_fields"):
            global_name = add_global(qualified_name(type(arg)), type(arg))
            return f"{global_name}({', '.join(get_repr(a) for a in arg)})"
        if type(arg) is tuple:
            inner = ", ".join(get_repr(a) for a in arg)
            return f"({inner},)" if len(arg) == 1 else f"({inner})"
        if isinstance(arg, list):
            return f"[{', '.join(get_repr(a) for a in arg)}]"
        if isinstance(arg, dict):
            return "{" + ", ".join(f"{get_repr(k)}: {get_repr(v)}" for k, v in arg.items()) + "}"
        if isinstance(arg, slice):
            return f"slice({get_repr(arg.start)}, {get_repr(arg.stop)}, {get_repr(arg.step)})"
        if isinstance(arg, enum.Enum):
            cls = type(arg)
            return f"{add_global(cls.__name__, cls)}.{arg.name}"
        if isinstance(arg, type) or (callable(arg) and hasattr(arg, "__name__")
                                     and not hasattr(arg, "dtype")):
            try:
                return add_global(qualified_name(arg), arg)
            except RuntimeError:
                return repr(arg)
        return repr(arg)

    def format_args(args, kwargs):
        parts = [get_repr(a) for a in args]
        parts += [f"{k} = {get_repr(v)}" for k, v in kwargs.items()]
        return ", ".join(parts)

    # the node after which each value is used for the last time
    node_to_last_use = {}
    user_to_last_uses = {}

    def register_last_uses(n, user):
        if n not in node_to_last_use:
            node_to_last_use[n] = user
            user_to_last_uses.setdefault(user, []).append(n)

    for node in reversed(nodes):
        for arg in _input_nodes_in_order(node):
            register_last_uses(arg, node)

    free_vars = []
    body = []
    maybe_return_annotation = [""]
    prev_stacktrace = [object()]

    def delete_unused_values(user):
        if user.op == "placeholder":
            return
        if user.op == "output":
            body.append("\n")
            return
        to_delete = list(user_to_last_uses.get(user, []))
        if len(user.users) == 0:
            to_delete.append(user)
        if to_delete:
            body.append(";  " + " = ".join([repr(n) for n in to_delete] + ["None"]) + "\n")
        else:
            body.append("\n")

    def emit_node(node):
        maybe_type_annotation = "" if node.type is None else f" : {type_repr(node.type)}"
        if verbose and node.op not in ("placeholder", "output"):
            trace = node.stack_trace
            if trace != prev_stacktrace[0]:
                prev_stacktrace[0] = trace
                if trace:
                    lines = [line.strip() for line in trace.strip().split("\n")]
                    body.append("\n" + "".join(f"# {line}\n" for line in lines[-2:]))
                else:
                    body.append("\n# No stacktrace found for following nodes\n")
        if node.op == "placeholder":
            maybe_default_arg = "" if not node.args else f" = {get_repr(node.args[0])}"
            free_vars.append(f"{node.target}{maybe_type_annotation}{maybe_default_arg}")
            raw_name = node.target.replace("*", "")
            if raw_name != repr(node):
                body.append(f"{repr(node)} = {raw_name}\n")
            return
        if node.op == "call_method":
            body.append(f"{repr(node)}{maybe_type_annotation} = "
                        f"{_format_target(repr(node.args[0]), node.target)}"
                        f"({format_args(node.args[1:], node.kwargs)})")
            return
        if node.op == "call_function":
            target = node.target
            name = getattr(target, "__name__", "")
            if getattr(target, "__module__", "") == "_operator" and name in magic_methods:
                body.append(f"{repr(node)}{maybe_type_annotation} = "
                            f"{magic_methods[name].format(*(repr(a) for a in node.args))}")
                return
            if getattr(target, "__module__", "") == "_operator" and name in inplace_methods:
                body.append(f"{inplace_methods[name].format(*(repr(a) for a in node.args))};  "
                            f"{repr(node)}{maybe_type_annotation} = {repr(node.args[0])}")
                return
            global_name = add_global(qualified_name(target), target)
            if (global_name == "getattr" and len(node.args) == 2 and isinstance(node.args[1], str)
                    and node.args[1].isidentifier() and not node.kwargs):
                body.append(f"{repr(node)}{maybe_type_annotation} = "
                            f"{_format_target(repr(node.args[0]), node.args[1])}")
                return
            body.append(f"{repr(node)}{maybe_type_annotation} = {global_name}"
                        f"({format_args(node.args, node.kwargs)})")
            if node.meta.get("is_wrapped", False):
                wrapped_fns.setdefault(global_name)
            return
        if node.op == "call_module":
            body.append(f"{repr(node)}{maybe_type_annotation} = "
                        f"{_format_target(root_module, node.target)}"
                        f"({format_args(node.args, node.kwargs)})")
            return
        if node.op == "get_attr":
            body.append(f"{repr(node)}{maybe_type_annotation} = "
                        f"{_format_target(root_module, node.target)}")
            return
        if node.op == "output":
            if node.type is not None:
                maybe_return_annotation[0] = f" -> {type_repr(node.type)}"
            body.append(f"return {get_repr(node.args[0])}")
            return
        raise NotImplementedError(f"node: {node.op} {node.target}")

    for node in nodes:
        emit_node(node)
        delete_unused_values(node)

    if len(body) == 0:
        body.append("pass\n")
    if wrapped_fns:
        from .tracer import wrap
        wrap_name = add_global("wrap", wrap)
        wrap_stmts = "\n".join(f'{wrap_name}("{name}")' for name in wrapped_fns)
    else:
        wrap_stmts = ""
    code = "".join(body).lstrip("\n")
    code = "\n".join("    " + line for line in code.split("\n"))
    prologue = f"def forward({', '.join([root_module] + free_vars)}){maybe_return_annotation[0]}:"
    fn_code = f"\n{wrap_stmts}\n\n{prologue}\n{code}"
    return PythonCode(fn_code, globals_)


def _input_nodes_in_order(node):
    out = []

    def visit(a):
        if isinstance(a, Node):
            out.append(a)
        elif isinstance(a, (tuple, list)):
            for elem in a:
                visit(elem)
        elif isinstance(a, dict):
            for v in a.values():
                visit(v)
        elif isinstance(a, slice):
            visit(a.start)
            visit(a.stop)
            visit(a.step)

    visit(node.args)
    visit(node.kwargs)
    return out
