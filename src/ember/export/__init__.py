"""``ember.export``: whole programs as graphs of ember ops, as ``torch.export`` gives them.

``export(model, args)`` runs the model once on example inputs and returns an
``ExportedProgram``: a graph (``graph_module``) whose inputs are the model's parameters,
buffers and constant tensors (lifted, as ``graph_signature`` lists them) followed by the user
inputs; ``module()`` runs it as a module, ``run_decompositions()`` rewrites composite ops into
simpler ones, ``Dim`` and ``dynamic_shapes`` mark dimensions that may vary, and ``save``/``load``
store a program in ember's export format (not torch's ``.pt2``).
"""
from ._decompositions import default_decompositions
from .dynamic_shapes import Dim, DimHint, ShapeGuards, dims
from ._errors import GuardOnDataDependentSymNode, UserError
from ._export import export
from .graph_signature import (ConstantArgument, ExportGraphSignature, InputKind, InputSpec,
                               OutputKind, OutputSpec, TensorArgument)
from .exported_program import ExportedProgram
from ._serialize import load, save

__all__ = ["ConstantArgument", "Dim", "DimHint", "ExportGraphSignature", "ExportedProgram",
           "GuardOnDataDependentSymNode", "InputKind", "InputSpec", "OutputKind", "OutputSpec",
           "ShapeGuards", "TensorArgument", "UserError", "default_decompositions", "dims",
           "export", "load", "save"]
