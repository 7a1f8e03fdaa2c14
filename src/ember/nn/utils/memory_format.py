"""Converting convolution weights to a memory format (``channels_last`` / ``channels_last_3d``)."""

__all__ = ["convert_conv2d_weight_memory_format", "convert_conv3d_weight_memory_format"]


def _convert(module, memory_format, kinds):
    if isinstance(module, kinds):
        module.weight.data = module.weight.detach().clone(memory_format=memory_format)
    for child in module.children():
        _convert(child, memory_format, kinds)
    return module


def convert_conv2d_weight_memory_format(module, memory_format):
    """Give the weight of every ``Conv2d`` and ``ConvTranspose2d`` in ``module`` (itself and its
    descendants) the strides of ``memory_format``, in place; returns ``module``."""
    from ..modules.conv import Conv2d, ConvTranspose2d
    return _convert(module, memory_format, (Conv2d, ConvTranspose2d))


def convert_conv3d_weight_memory_format(module, memory_format):
    """Give the weight of every ``Conv3d`` and ``ConvTranspose3d`` in ``module`` (itself and its
    descendants) the strides of ``memory_format``, in place; returns ``module``."""
    from ..modules.conv import Conv3d, ConvTranspose3d
    return _convert(module, memory_format, (Conv3d, ConvTranspose3d))
