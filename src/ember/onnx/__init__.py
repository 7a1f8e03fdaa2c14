"""``ember.onnx``: export a model to ONNX, as ``torch.onnx.export`` does with its tracing
exporter.

``export(model, args, "model.onnx", input_names=..., output_names=..., dynamic_axes=...)``
traces the model with ``ember.jit``'s recorder and writes the recorded ops as an ONNX graph
(opset 17 or newer) with the ``onnx`` package, which is imported only when an export runs.
"""
from . import errors
from ._export import OnnxExporterError, export, is_in_onnx_export

__all__ = ["errors", "export", "is_in_onnx_export", "OnnxExporterError"]
