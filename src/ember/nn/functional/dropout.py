"""Dropout: zero elements (or whole channels) at random during training."""
import math
import warnings

from ..._backend import to_device_of
from ...ops._common import apply_inplace, make
from ...ops.random import _rng, _uniform_array
from ..._torch_function import override_or_raise

__all__ = ["dropout", "dropout1d", "dropout2d", "dropout3d", "alpha_dropout",
           "feature_alpha_dropout"]

_SELU_ALPHA_PRIME = 1.7580993408473766


def _check_p(p):
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def _keep_mask(input, p, mask_shape):
    """An array of 0/1 of ``input``'s dtype, each 1 with probability ``1 - p``."""
    data = input._data
    u = _uniform_array(_rng(None), mask_shape, data.dtype)
    return to_device_of(u >= p, data).astype(data.dtype)


def _drop(input, p, mask_shape):
    if p == 1:
        return input * 0.0
    return input * make(_keep_mask(input, p, mask_shape) * (1.0 / (1.0 - p)))


def _alpha_drop(input, p, mask_shape):
    if p == 1:
        return input * 0.0
    keep = _keep_mask(input, p, mask_shape)
    a = 1.0 / math.sqrt((_SELU_ALPHA_PRIME ** 2 * p + 1) * (1 - p))
    b = (keep - 1) * (_SELU_ALPHA_PRIME * a) + _SELU_ALPHA_PRIME * a * p
    return input * make(keep * a) + make(b.astype(keep.dtype))


def _apply(kernel, input, p, training, inplace, mask_shape):
    _check_p(p)
    if not training or p == 0:
        return input
    if inplace:
        return apply_inplace(input, kernel, p, mask_shape)
    return kernel(input, p, mask_shape)


def dropout(input, p=0.5, training=True, inplace=False):
    """During training, zeroes each element with probability ``p`` and scales the rest by
    ``1 / (1 - p)``."""
    try:
        return _apply(_drop, input, p, training, inplace, input.shape)
    except (AttributeError, TypeError) as error:   # a tensor-like argument's override
        return override_or_raise(dropout, error, input, p, training, inplace)


def _channel_shape(input, batched_ndim):
    """The mask shape that drops whole channels: (N, C, 1, ...) or (C, 1, ...) unbatched."""
    lead = 2 if input.ndim == batched_ndim else 1
    return tuple(input.shape[:lead]) + (1,) * (input.ndim - lead)


def dropout1d(input, p=0.5, training=True, inplace=False):
    """Randomly zero out entire channels of an (N, C, L) or (C, L) input."""
    if input.ndim not in (2, 3):
        raise RuntimeError(f"dropout1d: Expected 2D or 3D input, but received a {input.ndim}D "
                           "input. Note that dropout1d exists to provide channel-wise dropout on "
                           "inputs with 1 spatial dimension, a channel dimension, and an optional "
                           "batch dimension (i.e. 2D or 3D inputs).")
    return _apply(_drop, input, p, training, inplace, _channel_shape(input, 3))


def dropout2d(input, p=0.5, training=True, inplace=False):
    """Randomly zero out entire channels of an (N, C, H, W) or (C, H, W) input."""
    if input.ndim not in (3, 4):
        warnings.warn(f"dropout2d: Received a {input.ndim}-D input to dropout2d, which is "
                      "deprecated and will result in an error in a future release. To retain the "
                      "behavior and silence this warning, please use dropout instead. Note that "
                      "dropout2d exists to provide channel-wise dropout on inputs with 2 spatial "
                      "dimensions, a channel dimension, and an optional batch dimension (i.e. 3D "
                      "or 4D inputs).", stacklevel=2)
    if input.ndim == 3:
        warnings.warn("dropout2d: Received a 3D input to dropout2d and assuming that channel-wise "
                      "1D dropout behavior is desired - input is interpreted as shape (N, C, L), "
                      "where C is the channel dim. This behavior will change in a future release "
                      "to interpret the input as one without a batch dimension, i.e. shape (C, "
                      "H, W). To maintain the 1D channel-wise dropout behavior, please switch to "
                      "using dropout1d instead.", stacklevel=2)
        return _apply(_drop, input, p, training, inplace, _channel_shape(input, 3))
    return _apply(_drop, input, p, training, inplace, _channel_shape(input, 4))


def dropout3d(input, p=0.5, training=True, inplace=False):
    """Randomly zero out entire channels of an (N, C, D, H, W) or (C, D, H, W) input."""
    if input.ndim not in (4, 5):
        warnings.warn(f"dropout3d: Received a {input.ndim}-D input to dropout3d, which is "
                      "deprecated and will result in an error in a future release. To retain the "
                      "behavior and silence this warning, please use dropout instead. Note that "
                      "dropout3d exists to provide channel-wise dropout on inputs with 3 spatial "
                      "dimensions, a channel dimension, and an optional batch dimension (i.e. 4D "
                      "or 5D inputs).", stacklevel=2)
    return _apply(_drop, input, p, training, inplace, _channel_shape(input, 5))


def alpha_dropout(input, p=0.5, training=False, inplace=False):
    """Dropout for SELU networks: keeps the input's mean and variance (dropped elements take
    SELU's negative saturation value, then an affine map restores the statistics)."""
    return _apply(_alpha_drop, input, p, training, inplace, input.shape)


def feature_alpha_dropout(input, p=0.5, training=False, inplace=False):
    """:func:`alpha_dropout` over whole channels."""
    return _apply(_alpha_drop, input, p, training, inplace,
                  tuple(input.shape[:2]) + (1,) * (input.ndim - 2))
