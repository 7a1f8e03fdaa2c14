"""``ShapeProp``: run a GraphModule on example inputs and record each node's tensor shape,
dtype, strides and memory format in ``node.meta['tensor_meta']``."""
from typing import Any, NamedTuple

from ..interpreter import Interpreter
from ..node import map_aggregate

__all__ = ["TensorMetadata", "ShapeProp"]


class TensorMetadata(NamedTuple):
    """What ShapeProp records of a tensor."""
    shape: Any
    dtype: Any
    requires_grad: bool
    stride: tuple[int, ...]
    memory_format: Any
    is_quantized: bool
    qparams: dict[str, Any]


def _extract_tensor_metadata(result, include_contiguity=True):
    import ember
    memory_format = None
    if include_contiguity:
        for query_format in (ember.contiguous_format, ember.channels_last, ember.channels_last_3d):
            try:
                if result.is_contiguous(memory_format=query_format):
                    memory_format = query_format
                    break
            except (RuntimeError, ValueError):
                continue
    return TensorMetadata(result.shape, result.dtype, result.requires_grad, result.stride(),
                          memory_format, bool(getattr(result, "is_quantized", False)), {})


class ShapeProp(Interpreter):
    """Executes a GraphModule node by node and records, for each node whose result is (or holds)
    tensors, ``node.meta['tensor_meta']``: a ``TensorMetadata`` (shape, dtype, requires_grad,
    stride, memory_format, is_quantized, qparams), or the same structure as the result with one
    for each tensor; ``node.meta['type']`` is the result's type. ::

        ShapeProp(gm).propagate(ember.randn(50, 128))
        for node in gm.graph.nodes:
            print(node.name, node.meta['tensor_meta'].dtype, node.meta['tensor_meta'].shape)
    """

    def __init__(self, gm, fake_mode=None):
        super().__init__(gm)
        self.fake_mode = fake_mode
        self.real_module = self.module

    def run_node(self, n):
        from ... import Tensor
        result = super().run_node(n)
        found_tensor = False

        def extract_tensor_meta(obj):
            nonlocal found_tensor
            if isinstance(obj, Tensor):
                found_tensor = True
                return _extract_tensor_metadata(obj)
            return obj

        meta = map_aggregate(result, extract_tensor_meta)
        if found_tensor:
            n.meta["tensor_meta"] = meta
        n.meta["type"] = type(result)
        return result

    def propagate(self, *args):
        """Run the module on ``args``, recording the metadata; returns its result."""
        return super().run(*args)
