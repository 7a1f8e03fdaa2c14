"""``replace_all_batch_norm_modules_``: batch norm layers that keep no running statistics, so
that ``vmap`` over a model in training mode does not write into shared buffers."""
from ._batched import BatchedTensor

__all__ = ["replace_all_batch_norm_modules_", "debug_unwrap"]


def replace_all_batch_norm_modules_(root):
    """Sets ``running_mean``, ``running_var`` and ``num_batches_tracked`` to None and
    ``track_running_stats`` to False on every batch norm layer of ``root`` (in place); returns
    ``root``."""
    from ..nn.modules.normalization import _BatchNorm
    for module in root.modules():
        if isinstance(module, _BatchNorm) and module.track_running_stats:
            module.running_mean = None
            module.running_var = None
            module.num_batches_tracked = None
            module.track_running_stats = False
    return root


def debug_unwrap(tensor, *, recurse=True):
    """The tensor behind a BatchedTensor of ``vmap`` (with the mapped dimension), for
    debugging; every level's with ``recurse``. Other values come back as they are."""
    if type(tensor) is not BatchedTensor:
        return tensor
    if not recurse:
        return tensor.value
    while type(tensor) is BatchedTensor:
        tensor = tensor.value
    return tensor
