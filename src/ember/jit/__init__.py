"""``ember.jit``: tracing, as ``torch.jit.trace`` does, and the TorchScript names that let code
written for TorchScript import and run eagerly.

``trace(module, example_inputs)`` runs the module once and records the ember ops it executed
into an ``ember.fx.Graph``; the returned ``TracedModule`` replays them (``graph``, ``code``,
``save``). ``save``/``load`` use ember's own trace format (a zip file with the graph as JSON and
the tensors as an ``ember.save`` archive), not TorchScript's: ember cannot read or write
TorchScript files. ``script`` raises NotImplementedError: use ``trace`` or ``ember.fx``.
"""
from . import annotations  # noqa: F401
from ._archive import load, save
from ._recorder import TracerWarning, TracedInt  # noqa: F401
from ._script import (Attribute, CompilationUnit, Error, Future, annotate,
                      enable_onednn_fusion, export, export_opnames, fork, freeze, ignore,
                      interface, isinstance, onednn_fusion_enabled,
                      optimize_for_inference, script, script_if_tracing, set_fusion_strategy,
                      strict_fusion, unused, wait)
from ._script import Final, is_scripting, is_tracing  # noqa: F401  (torch's, outside __all__)
from ._trace import ScriptFunction, ScriptModule, trace, trace_module
from ._trace import TopLevelTracedModule, TracedModule, TracingCheckError  # noqa: F401

__all__ = ["Attribute", "CompilationUnit", "Error", "Future", "ScriptFunction", "ScriptModule",
           "annotate", "enable_onednn_fusion", "export", "export_opnames", "fork", "freeze",
           "interface", "ignore", "isinstance", "load", "onednn_fusion_enabled",
           "optimize_for_inference", "save", "script", "script_if_tracing",
           "set_fusion_strategy", "strict_fusion", "trace", "trace_module", "unused", "wait"]
