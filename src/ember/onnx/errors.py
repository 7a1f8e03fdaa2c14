"""The ONNX exporter's exceptions, as ``torch.onnx.errors``."""
from ._export import OnnxExporterError, UnsupportedOperatorError

__all__ = ["OnnxExporterError", "UnsupportedOperatorError"]
