"""Flatten parameters into one vector and back."""
from ..._tensor import Tensor

__all__ = ["parameters_to_vector", "vector_to_parameters"]


def parameters_to_vector(parameters):
    """Flatten an iterable of parameters into a single vector."""
    from ...ops.shape import cat
    return cat([p.reshape(-1) for p in parameters])


def vector_to_parameters(vec, parameters):
    """Copy slices of the vector ``vec`` into ``parameters`` (their data then views ``vec``)."""
    if not isinstance(vec, Tensor):
        raise TypeError(f"expected torch.Tensor, but got: {type(vec).__name__}")
    pointer = 0
    for param in parameters:
        num = param.numel()
        param.data = vec[pointer:pointer + num].view_as(param).data
        pointer += num
