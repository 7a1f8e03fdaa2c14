"""``Interpreter`` runs a GraphModule node by node; ``Transformer`` runs it on Proxies to build
a new one. Override their per-op methods to change what happens."""
import inspect

from .graph import Graph
from .node import map_aggregate, map_arg
from .proxy import Proxy
from .tracer import Tracer

__all__ = ["Interpreter", "Transformer"]


class Interpreter:
    """Executes a GraphModule one node at a time. ``run(*args)`` calls ``run_node`` for each
    node, which dispatches on the op to ``placeholder``, ``get_attr``, ``call_function``,
    ``call_method``, ``call_module`` and ``output``; override any of them in a subclass, e.g. to
    swap ``ember.sigmoid`` for ``ember.neg``::

        class NegSigmSwap(Interpreter):
            def call_function(self, target, args, kwargs):
                if target is ember.sigmoid:
                    return ember.neg(*args, **kwargs)
                return super().call_function(target, args, kwargs)

    ``garbage_collect_values`` frees each value after its last use."""

    def __init__(self, module, garbage_collect_values=True, graph=None):
        self.module = module
        self.submodules = dict(self.module.named_modules())
        self.graph = graph if graph is not None else self.module.graph
        self.env = {}
        self.name = "Interpreter"
        self.garbage_collect_values = garbage_collect_values
        self.extra_traceback = True
        if self.garbage_collect_values:
            node_to_last_use = {}
            self.user_to_last_uses = {}
            for node in reversed(self.graph.nodes):
                for n in node.all_input_nodes:
                    if n not in node_to_last_use:
                        node_to_last_use[n] = node
                        self.user_to_last_uses.setdefault(node, []).append(n)

    def run(self, *args, initial_env=None, enable_io_processing=True):
        """Run the module on ``args`` and return its result. ``initial_env`` maps nodes to
        values known in advance (those nodes are not run)."""
        self.env = initial_env if initial_env is not None else {}
        if enable_io_processing:
            args = self.graph.process_inputs(*args)
        self.args_iter = iter(args)
        for node in self.graph.nodes:
            if node in self.env:
                continue
            try:
                self.env[node] = self.run_node(node)
            except Exception as e:
                if self.extra_traceback:
                    msg = f"While executing {node.format_node()}"
                    msg = f"{e.args[0]}\n\n{msg}" if e.args and isinstance(e.args[0], str) else msg
                    if node.stack_trace:
                        msg += f"\nOriginal traceback:\n{node.stack_trace}"
                    try:
                        e.args = (msg,) + e.args[1:]
                    except Exception:
                        pass
                raise
            if self.garbage_collect_values:
                for to_delete in self.user_to_last_uses.get(node, []):
                    del self.env[to_delete]
            if node.op == "output":
                output_val = self.env[node]
                return self.graph.process_outputs(output_val) if enable_io_processing else output_val
        return None

    def boxed_run(self, args_list):
        """Run with the inputs in the list ``args_list``, which is cleared (so the interpreter
        holds the only references)."""
        args_iter = iter(args_list)
        env = {}
        for n in self.graph.nodes:
            if n.op == "placeholder":
                env[n] = next(args_iter)
        args_list.clear()
        return self.run(initial_env=env)

    def run_node(self, n):
        """Run node ``n``: fetch its arguments from the environment and call the method named
        after its op."""
        args, kwargs = self.fetch_args_kwargs_from_env(n)
        return getattr(self, n.op)(n.target, args, kwargs)

    # -- one method per op ---------------------------------------------------------------------
    def placeholder(self, target, args, kwargs):
        """The next input (all remaining ones for ``*args``), or the default in ``args``."""
        if target.startswith("**"):
            return {}
        if target.startswith("*"):
            return list(self.args_iter)
        try:
            return next(self.args_iter)
        except StopIteration as si:
            if len(args) > 0:
                return args[0]
            raise RuntimeError(f"Expected positional argument for parameter {target}, but one "
                               f"was not passed in!") from si

    def get_attr(self, target, args, kwargs):
        """The attribute ``target`` of the module."""
        return self.fetch_attr(target)

    def call_function(self, target, args, kwargs):
        """``target(*args, **kwargs)``."""
        return target(*args, **kwargs)

    def call_method(self, target, args, kwargs):
        """``args[0].target(*args[1:], **kwargs)``."""
        self_obj, *args_tail = args
        return getattr(self_obj, target)(*args_tail, **kwargs)

    def call_module(self, target, args, kwargs):
        """The submodule ``target`` called on args and kwargs."""
        submod = self.fetch_attr(target)
        return submod(*args, **kwargs)

    def output(self, target, args, kwargs):
        """The value returned: ``args[0]``."""
        return args[0]

    # -- helpers -------------------------------------------------------------------------------
    def fetch_attr(self, target):
        """Fetch the attribute with qualified name ``target`` from the module."""
        target_atoms = target.split(".")
        attr_itr = self.module
        for i, atom in enumerate(target_atoms):
            if not hasattr(attr_itr, atom):
                raise RuntimeError(f"Node referenced nonexistent target "
                                   f"{'.'.join(target_atoms[:i + 1])}")
            attr_itr = getattr(attr_itr, atom)
        return attr_itr

    def fetch_args_kwargs_from_env(self, n):
        """``n``'s args and kwargs with the nodes in them replaced by their values."""
        return self.map_nodes_to_values(n.args, n), self.map_nodes_to_values(n.kwargs, n)

    def map_nodes_to_values(self, args, n):
        """Replace each node in ``args`` by its value in the environment."""
        def load_arg(n_arg):
            if n_arg not in self.env:
                raise RuntimeError(f"Node {n} referenced nonexistent value {n_arg}! Run "
                                   f"Graph.lint() to diagnose such issues")
            return self.env[n_arg]
        return map_arg(args, load_arg)


class _TransformerTracer(Tracer):
    def __init__(self, graph):
        super().__init__()
        self.graph = graph
        self.tensor_attrs = {}

    def is_leaf_module(self, _, __):
        return True


class Transformer(Interpreter):
    """Like Interpreter, but runs the graph on Proxies, so that the calls it makes are recorded
    into a new graph; ``transform()`` returns the new GraphModule. Override the per-op methods
    to change what is recorded."""

    def __init__(self, module):
        super().__init__(module)
        self.new_graph = Graph()
        self.tracer = _TransformerTracer(self.new_graph)
        self.tracer.root = module

    def placeholder(self, target, args, kwargs):
        default_value = next(iter(args)) if args else inspect.Signature.empty
        return Proxy(self.new_graph.placeholder(target, default_value=default_value), self.tracer)

    def get_attr(self, target, args, kwargs):
        return self.tracer.create_proxy("get_attr", target, args, kwargs)

    def call_module(self, target, args, kwargs):
        submod = self.fetch_attr(target)
        return self.tracer.call_module(submod, submod.forward, args, kwargs)

    def call_function(self, target, args, kwargs):
        return self.tracer.create_proxy("call_function", target, args, kwargs)

    def transform(self):
        """Run the transformation and return the new GraphModule."""
        from ._patching import _Patcher, ember_patches
        from .graph_module import GraphModule
        with _Patcher() as patcher:
            ember_patches(patcher)
            result = super().run(enable_io_processing=False)
        if result is not None:
            def strip_proxy(a):
                return a.node if isinstance(a, Proxy) else a
            new_output_node = self.new_graph.output(map_aggregate(result, strip_proxy))
            old_output_node = list(self.graph.nodes)[-1]
            new_output_node.meta.update(old_output_node.meta)
        return GraphModule(self.module, self.new_graph)
