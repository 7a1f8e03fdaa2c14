"""Finding values a trace froze: a tensor the recorder holds as a constant that was computed,
during the trace, from the inputs or the parameters. An ember function reached by a path the
recorder does not patch computed it, so a graph replaying it would give the example's value
for every input. Exporters (``ember.export``, ``ember.onnx``) run the trace with inputs that
require grad, so such a tensor shows itself by its autograd history."""

__all__ = ["check_no_frozen_values"]

_TRACE_CONSTANT_PREFIX = "_tensor_constant"


def check_no_frozen_values(constants, exporter):
    """Raise RuntimeError when one of ``constants`` (qualified name -> tensor, a recorder's
    constants) is a tensor made during the trace from traced values. Tensors the module held
    before the trace (its attributes) are its own constants and are not checked."""
    for name, tensor in constants.items():
        if not name.split(".")[-1].startswith(_TRACE_CONSTANT_PREFIX):
            continue
        if tensor.grad_fn is not None:
            raise RuntimeError(
                f"{exporter}: the trace holds a tensor computed from the inputs or parameters "
                f"as a constant ({name}, made by {type(tensor.grad_fn).__name__}): an ember "
                f"function the trace could not record computed it (reached through a container, "
                f"a closure or a private module), so the exported model would use the "
                f"example's value for every input. Call ember functions through ember's "
                f"public namespaces (ember.*, ember.nn.functional.*, Tensor methods) or "
                f"methods of the model.")
