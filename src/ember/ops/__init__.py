"""Every differentiable op, grouped by family. Importing this package attaches the ops to
``Tensor`` as methods."""
from . import convert, creation, pointwise, reduce, ternary, unary, view  # noqa: F401
