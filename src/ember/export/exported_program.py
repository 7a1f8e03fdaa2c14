"""``ExportedProgram``: a graph of ember ops whose parameters, buffers and constant tensors are
inputs, with the tensors themselves (``state_dict``, ``constants``) and the shape guards."""
import inspect

from ..fx.graph_module import GraphModule
from ..fx.node import Node
from ..nn import Module
from .graph_signature import ExportGraphSignature, InputKind, OutputSpec, TensorArgument
from ._pytree import unflatten

__all__ = ["ExportedProgram"]


class ExportedProgram:
    """A program exported by ``ember.export.export``.

    ``graph_module`` runs the graph: its inputs are the placeholders that ``graph_signature``
    lists (parameters, buffers, constant tensors, then the user inputs) and it returns the flat
    tuple of outputs. ``module()`` gives a module that takes the user inputs only, checks their
    shapes and returns the outputs in the program's structure. ``state_dict`` holds the
    parameters and buffers (the exported module's own tensors), ``constants`` the other tensors
    the program used, ``example_inputs`` the ``(args, kwargs)`` it was exported with."""

    def __init__(self, graph_module, graph_signature, state_dict, constants, shape_guards,
                 example_inputs, input_names, out_spec, training=False):
        self.graph_module = graph_module
        self.graph_signature = graph_signature
        self.state_dict = state_dict
        self.constants = constants
        self.shape_guards = shape_guards
        self.example_inputs = example_inputs
        self._input_names = list(input_names)
        self._out_spec = out_spec
        self._training = training

    @property
    def graph(self):
        return self.graph_module.graph

    @property
    def range_constraints(self):
        """Dim name -> (min, max) of each dynamic dimension (max ``inf`` when unbounded)."""
        return self.shape_guards.range_constraints

    @property
    def dialect(self):
        return "EMBER"

    def named_parameters(self):
        for name in self.graph_signature.parameters:
            yield name, self.state_dict[name]

    def parameters(self):
        for _, p in self.named_parameters():
            yield p

    def named_buffers(self):
        for name in self.graph_signature.buffers:
            yield name, self.state_dict.get(name, self.constants.get(name))

    def buffers(self):
        for _, b in self.named_buffers():
            yield b

    def __call__(self, *args, **kwargs):
        raise RuntimeError("Unable to call ExportedProgram directly. You should use "
                           "`exported_program.module()` instead.")

    def module(self):
        """A module that runs the program on the user inputs: parameters and buffers are its
        own (the ``state_dict`` tensors, under their qualified names), inputs are checked
        against the exported shapes (``AssertionError: Guard failed: ...``)."""
        return _ExportedModule(self)

    def run_decompositions(self, decomp_table=None):
        """A new ExportedProgram whose graph has each call of a function in ``decomp_table``
        (``default_decompositions()`` by default) replaced by its decomposition's ops. Calls of
        other functions, and cases a decomposition declines, stay as they are."""
        from ._decompositions import default_decompositions
        from ._rewrite import decompose
        table = default_decompositions() if decomp_table is None else decomp_table
        graph = decompose(self.graph_module.graph, table)
        gm = GraphModule({}, graph, "GraphModule")
        output = next(n for n in reversed(graph.nodes) if n.op == "output")
        output_specs = [OutputSpec(s.kind, TensorArgument(v.name) if isinstance(v, Node) else
                                   s.arg, s.target)
                        for s, v in zip(self.graph_signature.output_specs, output.args[0])]
        signature = ExportGraphSignature(self.graph_signature.input_specs, output_specs)
        return ExportedProgram(gm, signature, self.state_dict, self.constants,
                               self.shape_guards, self.example_inputs, self._input_names,
                               self._out_spec, self._training)

    def __str__(self):
        code = self.graph_module.code.strip("\n")
        code = "\n".join("    " + line for line in code.splitlines())
        signature = "\n".join("    " + line for line in str(self.graph_signature).splitlines())
        return (f"ExportedProgram:\n{code}\n\nGraph signature: {signature}\n"
                f"Range constraints: {self.range_constraints}\n")

    __repr__ = __str__

    # -- running ----------------------------------------------------------------------------------
    def _bind_user_inputs(self, args, kwargs):
        names = self._input_names
        n_args = len(self.example_inputs[0])
        if len(args) != n_args or set(kwargs) != set(self.example_inputs[1]):
            raise ValueError(
                f"Trying to flatten user inputs with exported input tree spec: "
                f"{n_args} positional inputs and keyword inputs "
                f"{sorted(self.example_inputs[1])}, but actually got {len(args)} positional "
                f"inputs and keyword inputs {sorted(kwargs)}. Please check that the inputs have "
                f"the same number and type of args and kwargs as the ones you used when "
                f"tracing.")
        values = dict(zip(names, args))
        values.update(kwargs)
        return values

    def _lifted_inputs(self, owner, user_values):
        from .. import Tensor
        flat = []
        for spec in self.graph_signature.input_specs:
            if spec.kind is InputKind.PARAMETER:
                flat.append(owner.get_parameter(spec.target))
            elif spec.kind is InputKind.BUFFER:
                flat.append(owner.get_buffer(spec.target))
            elif spec.kind is InputKind.CONSTANT_TENSOR:
                flat.append(self.constants[spec.target])
            else:
                flat.append(user_values[spec.arg.name])
        tensors = {k: v for k, v in user_values.items() if isinstance(v, Tensor)}
        self.shape_guards.check(tensors)
        return flat


def _ensure_path(root, path):
    module = root
    for atom in path:
        child = module._modules.get(atom)
        if child is None:
            child = Module()
            module.add_module(atom, child)
        module = child
    return module


class _ExportedModule(Module):
    """The module ``ExportedProgram.module()`` returns."""

    def __init__(self, program):
        super().__init__()
        self.__dict__["_program"] = program
        self.__dict__["_lifted"] = program.graph_module
        for spec in program.graph_signature.input_specs:
            if spec.kind not in (InputKind.PARAMETER, InputKind.BUFFER):
                continue
            *path, name = spec.target.split(".")
            owner = _ensure_path(self, path)
            if spec.kind is InputKind.PARAMETER:
                owner.register_parameter(name, program.state_dict[spec.target])
            else:
                tensor = program.state_dict.get(spec.target)
                if tensor is None:
                    tensor = program.constants[spec.target]
                owner.register_buffer(name, tensor, persistent=spec.persistent is not False)
        self.train(program._training)

    @property
    def graph(self):
        return self._lifted.graph

    @property
    def code(self):
        return self._lifted.code

    def forward(self, *args, **kwargs):
        program = self._program
        values = program._bind_user_inputs(args, kwargs)
        out = self._lifted(*program._lifted_inputs(self, values))
        return unflatten(out, program._out_spec)


def user_input_names(forward, n_args, kwarg_names):
    """The names of a forward's positional inputs (its parameter names) and keyword inputs."""
    try:
        params = [p for p in inspect.signature(forward).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):
        params = []
    names = [params[i].name if i < len(params) else f"args_{i}" for i in range(n_args)]
    return names + list(kwarg_names)

