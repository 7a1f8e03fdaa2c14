"""The errors ``ember.export`` raises where torch.export raises its own classes."""

__all__ = ["UserError", "GuardOnDataDependentSymNode"]


class UserError(RuntimeError):
    """Bad use of ``export``: inputs, ``dynamic_shapes`` or a dimension that cannot be dynamic.
    (torch's ``torch._dynamo.exc.UserError``, also a RuntimeError.)"""


class GuardOnDataDependentSymNode(RuntimeError):
    """The program branched on the value of a tensor (``if x.sum() > 0``): export cannot record
    a graph that holds for every input."""
