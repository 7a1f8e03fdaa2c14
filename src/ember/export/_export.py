"""``export``: record a module's forward once on example inputs into a graph of ember ops, and
lift its parameters, buffers and constant tensors to inputs of the graph."""
import contextlib
import warnings

from ..fx.graph import Graph
from ..jit._frozen import check_no_frozen_values
from ..fx.graph_module import GraphModule
from ..fx.node import Node
from ..nn import Module
from .dynamic_shapes import shape_guards
from ._errors import GuardOnDataDependentSymNode, UserError
from .graph_signature import (ConstantArgument, ExportGraphSignature, InputKind, InputSpec,
                               OutputKind, OutputSpec, TensorArgument)
from .exported_program import ExportedProgram, user_input_names
from ._pytree import flatten

__all__ = ["export"]


def _record_everything(module):
    return False


def _check_inputs(mod, args, kwargs):
    if not isinstance(mod, Module):
        raise ValueError(f"Expected `mod` to be an instance of `ember.nn.Module`, got "
                         f"{type(mod)}.")
    if not isinstance(args, tuple):
        raise UserError(f"Expecting `args` to be a tuple of example positional inputs, got "
                        f"{type(args)}")
    if kwargs is not None and not isinstance(kwargs, dict):
        raise UserError(f"Expecting `kwargs` to be a dict of example keyword inputs, got "
                        f"{type(kwargs)}")


def _record(mod, args, kwargs):
    """Run ``mod`` under a recorder that traces through every module (ember's layers too), so
    the graph holds ember functions only. A tensor turned into a Python value is an error:
    the graph would hold for the example's values only."""
    from ..jit._recorder import TracerWarning
    from ..jit._trace import layer_namespaces, record_graph
    import ember
    buffers = [(b, b._version_counter[0], b.detach().clone()) for b in mod.buffers()]
    with warnings.catch_warnings(record=True) as caught, _composite_kernels(), \
            ember.enable_grad():
        warnings.simplefilter("always", TracerWarning)
        try:
            rec, _ = record_graph(mod, mod.forward, _requiring_grad(args),
                                  _requiring_grad(kwargs), strict=False,
                                  is_leaf=_record_everything, extra_globals=layer_namespaces(),
                                  inline_callables=True)
        finally:
            # exporting is not a training step: batch norm's running statistics stay as they were
            for b, version, saved in buffers:
                if b._version_counter[0] != version:
                    b.data.copy_(saved)
    for w in caught:
        if issubclass(w.category, TracerWarning) and "Converting a tensor to" in str(w.message):
            raise GuardOnDataDependentSymNode(
                f"Could not guard on data-dependent expression: the program turned a tensor "
                f"into a Python value at {w.filename}:{w.lineno}, so its graph would depend on "
                f"the example's values. ({w.message})")
        warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    return rec


@contextlib.contextmanager
def _composite_kernels():
    """Fused kernels whose inside no trace can see stand aside (packed self-attention, so that
    attention records as ember ops), or are recorded as one call each (a recurrent layer's
    pass over the sequence, as torch.export records ``aten.lstm``)."""
    from ..jit._layers import recording_rnn_layer
    from ..nn.functional import attention
    from ..nn.modules import rnn
    saved = [(attention, "packed_self_attention_applies"), (rnn, "_rnn_layer")]
    saved = [(module, name, getattr(module, name)) for module, name in saved]
    attention.packed_self_attention_applies = lambda *args: False
    rnn._rnn_layer = recording_rnn_layer()
    try:
        yield
    finally:
        for module, name, value in saved:
            setattr(module, name, value)


def _requiring_grad(value):
    """Floating-point tensors of the example inputs as leaves that require grad: a value the
    trace froze as a constant then shows itself by its history (``check_no_frozen_values``)."""
    from .. import Tensor
    if isinstance(value, Tensor):
        if value.is_floating_point() and not value.requires_grad:
            return value.detach().requires_grad_(True)
        return value
    if isinstance(value, (tuple, list)):
        return type(value)(_requiring_grad(v) for v in value)
    if isinstance(value, dict):
        return {k: _requiring_grad(v) for k, v in value.items()}
    return value


def _placeholder_name(prefix, target):
    return prefix + target.replace(".", "_")


def _lift(mod, rec):
    """The recorded graph with get_attr nodes turned into placeholders, in torch.export's
    order: parameters, buffers, constant tensors, user inputs."""
    graph = Graph()
    specs = []
    by_tensor = {}
    state_dict = {}
    for name, p in mod.named_parameters():
        node = graph.placeholder(_placeholder_name("p_", name))
        specs.append(InputSpec(InputKind.PARAMETER, TensorArgument(node.name), name))
        by_tensor[id(p)] = node
        state_dict[name] = p
    constants = {}
    for name, b in mod.named_buffers():
        *path, leaf = name.split(".")
        owner = mod.get_submodule(".".join(path)) if path else mod
        persistent = leaf not in owner._non_persistent_buffers_set
        node = graph.placeholder(_placeholder_name("b_", name))
        specs.append(InputSpec(InputKind.BUFFER, TensorArgument(node.name), name, persistent))
        by_tensor[id(b)] = node
        (state_dict if persistent else constants)[name] = b
    env = {}
    recorded = list(rec.graph.nodes)
    for node in recorded:
        if node.op != "get_attr":
            continue
        tensor = rec.constants.get(node.target)
        if tensor is None:
            raise UserError(f"export cannot lift {node.target!r}: not a tensor of the module")
        if id(tensor) not in by_tensor:
            ph = graph.placeholder(_placeholder_name("c_", node.target))
            specs.append(InputSpec(InputKind.CONSTANT_TENSOR, TensorArgument(ph.name),
                                   node.target))
            constants[node.target] = tensor
            by_tensor[id(tensor)] = ph
        env[node] = by_tensor[id(tensor)]
    for node in recorded:
        if node.op == "placeholder":
            env[node] = graph.placeholder(node.target)
            specs.append(InputSpec(InputKind.USER_INPUT, TensorArgument(node.target), None))
    out_spec = None
    outputs = []
    for node in recorded:
        if node.op in ("placeholder", "get_attr"):
            continue
        if node.op == "output":
            leaves, out_spec = flatten(node.args[0])
            flat = tuple(env[x] if isinstance(x, Node) else x for x in leaves)
            graph.output(flat)
            outputs = [OutputSpec(OutputKind.USER_OUTPUT,
                                  TensorArgument(x.name) if isinstance(x, Node)
                                  else ConstantArgument("", x), None) for x in flat]
            continue
        env[node] = graph.node_copy(node, lambda n: env[n])
    graph.lint()
    check_no_frozen_values(rec.constants, "ember.export.export")
    return graph, ExportGraphSignature(specs, outputs), state_dict, constants, out_spec


def export(mod, args, kwargs=None, *, dynamic_shapes=None, strict=False,
           preserve_module_call_signature=()):
    """Export ``mod`` to an ``ExportedProgram``: run ``mod(*args, **kwargs)`` once and record
    the ember operations it executed, through every submodule, into a graph whose inputs are
    the module's parameters, buffers and constant tensors followed by the user inputs.

    ``dynamic_shapes`` (a dict from input name, or a tuple in input order, of ``{dim: Dim}``)
    marks dimensions that may change; every other dimension is fixed to the example's size and
    ``module()`` checks both on each call. Branching on a tensor's value raises
    ``GuardOnDataDependentSymNode``. ``strict`` is accepted for torch's signature: ember always
    records by running the Python program (torch's ``strict=False``).
    """
    _check_inputs(mod, args, kwargs)
    kwargs = dict(kwargs or {})
    names = user_input_names(mod.forward, len(args), kwargs)
    guards = shape_guards(dynamic_shapes, dict(zip(names, (*args, *kwargs.values()))))
    rec = _record(mod, args, kwargs)
    graph, signature, state_dict, constants, out_spec = _lift(mod, rec)
    gm = GraphModule({}, graph, "GraphModule")
    return ExportedProgram(gm, signature, state_dict, constants, guards, (tuple(args), kwargs),
                           names, out_spec, mod.training)
