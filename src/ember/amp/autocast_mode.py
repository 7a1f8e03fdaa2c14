"""``autocast``: run regions of a program in mixed precision, and the functions that read and
set the autocast state (thread-local, per device type, as in torch)."""
import functools
import warnings

from .. import _dtype
from .._device import _DEVICE_TYPES
from .._tensor import Tensor
from . import policy as _policy
from .policy import state as _state

__all__ = ["autocast", "is_autocast_available", "is_autocast_enabled", "set_autocast_enabled",
           "get_autocast_dtype", "set_autocast_dtype", "is_autocast_cache_enabled",
           "set_autocast_cache_enabled", "clear_autocast_cache", "custom_fwd", "custom_bwd"]

_SUPPORTED_DTYPES = {"cpu": (_dtype.bfloat16, _dtype.float16),
                     "cuda": (_dtype.float16, _dtype.bfloat16)}


def _check_device_type(device_type):
    """``device_type`` as a key of the autocast state; torch's errors for other strings."""
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
    base = device_type.split(":")[0]
    if base not in _DEVICE_TYPES:
        raise RuntimeError(f"Expected one of {', '.join(_DEVICE_TYPES)} device type at start of "
                           f"device string: {device_type}")
    if base not in _state.enabled:
        raise RuntimeError(f"User specified an unsupported autocast device_type '{device_type}'")
    return base


def is_autocast_available(device_type):
    """Whether autocast is available for ``device_type``."""
    return isinstance(device_type, str) and device_type.split(":")[0] in _state.enabled


def is_autocast_enabled(device_type=None):
    """Whether autocast is on in this thread for ``device_type`` (``"cuda"`` when omitted, as
    torch's legacy form)."""
    return _state.enabled[_check_device_type("cuda" if device_type is None else device_type)]


def set_autocast_enabled(device_type, enabled=None):
    """Turn autocast on or off for ``device_type`` in this thread. The legacy one-argument
    form ``set_autocast_enabled(enabled)`` sets CUDA's."""
    if enabled is None:
        device_type, enabled = "cuda", device_type
    _policy.set_enabled(_check_device_type(device_type), enabled)


def get_autocast_dtype(device_type):
    """The lower-precision dtype autocast uses for ``device_type`` in this thread."""
    return _state.dtype[_check_device_type(device_type)]


def set_autocast_dtype(device_type, dtype):
    """Set the dtype autocast uses for ``device_type`` in this thread."""
    _state.dtype[_check_device_type(device_type)] = dtype


def is_autocast_cache_enabled():
    return _state.cache_enabled


def set_autocast_cache_enabled(enabled):
    _state.cache_enabled = bool(enabled)


def clear_autocast_cache():
    """ember keeps no cache of cast weights: nothing to clear."""


def _cuda_available():
    from .._backend import load_cuda
    return load_cuda() is not None


class autocast:
    """Context manager (and decorator) in which listed ops run in a lower-precision dtype
    (``bfloat16`` on CPU by default, ``float16`` on CUDA) to gain speed while keeping
    accuracy: matrix products and convolutions in lower precision, losses and
    decompositions in float32, ops that combine tensors in the widest input dtype.

    Args:
        device_type (str): ``"cpu"`` or ``"cuda"``.
        dtype: the lower-precision dtype; ``get_autocast_dtype(device_type)`` when None.
        enabled (bool): whether autocast is on in the region. Default: True.
        cache_enabled (bool): accepted for torch compatibility (ember caches no casts).

    The state is thread-local; regions nest, and leaving one restores the state before it.
    Backward passes run in the state in effect when ``backward()`` is called, as in torch;
    running them outside the region is recommended.
    """

    def __init__(self, device_type, dtype=None, enabled=True, cache_enabled=None):
        self.device = device_type = _check_device_type(device_type)
        self.fast_dtype = get_autocast_dtype(device_type) if dtype is None else dtype
        self._cache_enabled = is_autocast_cache_enabled() if cache_enabled is None else cache_enabled
        self._enabled = enabled and self._dtype_supported(device_type)

    def _dtype_supported(self, device_type):
        """Warn and disable, as torch does, for an unavailable device or a dtype it refuses."""
        if device_type == "cuda" and not _cuda_available():
            warnings.warn("CUDA is not available or torch_xla is imported. Disabling autocast.",
                          UserWarning, stacklevel=3)
            return False
        if self.fast_dtype not in _SUPPORTED_DTYPES[device_type]:
            if device_type == "cpu":
                warnings.warn("In CPU autocast, but the target dtype is not supported. Disabling "
                              "autocast.\nCPU Autocast only supports dtypes of ember.bfloat16, "
                              "ember.float16 currently.", UserWarning, stacklevel=3)
            else:
                warnings.warn("In CUDA autocast, but the target dtype is not supported. Disabling "
                              "autocast.\nCUDA Autocast only supports dtypes of ember.float16, "
                              "ember.bfloat16 currently.", UserWarning, stacklevel=3)
            return False
        return True

    def __enter__(self):
        device = self.device
        self._previous = (_state.enabled[device], _state.dtype[device], _state.cache_enabled)
        _state.dtype[device] = self.fast_dtype
        _state.cache_enabled = self._cache_enabled
        _state.nesting += 1
        _policy.set_enabled(device, self._enabled)
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        device = self.device
        enabled, _state.dtype[device], _state.cache_enabled = self._previous
        _state.nesting -= 1
        _policy.set_enabled(device, enabled)
        return False

    def __call__(self, func):
        """Use the region as a decorator: each call of ``func`` runs inside it."""
        @functools.wraps(func)
        def decorated(*args, **kwargs):
            with autocast(self.device, self.fast_dtype, self._enabled, self._cache_enabled):
                return func(*args, **kwargs)
        return decorated


# ----------------------------------------------------------------------------------------
# custom autograd Functions

def _cast_inputs(value, device_type, dtype):
    if isinstance(value, Tensor):
        if value.is_floating_point() and value.device.type == device_type:
            return value.to(dtype)
        return value
    if isinstance(value, (list, tuple)):
        return type(value)(_cast_inputs(v, device_type, dtype) for v in value)
    if isinstance(value, dict):
        return {k: _cast_inputs(v, device_type, dtype) for k, v in value.items()}
    return value


def custom_fwd(fwd=None, *, device_type, cast_inputs=None):
    """Decorator for the ``forward`` of a custom autograd Function (a subclass of
    ``ember.autograd.Function``). With ``cast_inputs=None`` forward runs in the autocast state
    it is called in, and that state is recorded for ``custom_bwd``; otherwise, when autocast
    is on, forward runs with autocast off and its floating tensors of ``device_type`` cast to
    ``cast_inputs``."""
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
    if fwd is None:
        return functools.partial(custom_fwd, device_type=device_type, cast_inputs=cast_inputs)

    @functools.wraps(fwd)
    def decorate_fwd(*args, **kwargs):
        ctx = args[0]
        ctx._dtype = get_autocast_dtype(device_type)
        if cast_inputs is None:
            ctx._fwd_used_autocast = is_autocast_enabled(device_type)
            return fwd(*args, **kwargs)
        autocast_context = is_autocast_enabled(device_type)
        ctx._fwd_used_autocast = False
        if autocast_context:
            with autocast(device_type=device_type, enabled=False):
                return fwd(*_cast_inputs(args, device_type, cast_inputs),
                           **_cast_inputs(kwargs, device_type, cast_inputs))
        return fwd(*args, **kwargs)
    return decorate_fwd


def custom_bwd(bwd=None, *, device_type):
    """Decorator for the ``backward`` of a custom autograd Function: backward runs in the
    autocast state (on or off, and dtype) that forward ran in."""
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
    if bwd is None:
        return functools.partial(custom_bwd, device_type=device_type)

    @functools.wraps(bwd)
    def decorate_bwd(*args, **kwargs):
        ctx = args[0]
        with autocast(device_type=device_type, enabled=ctx._fwd_used_autocast, dtype=ctx._dtype):
            return bwd(*args, **kwargs)
    return decorate_bwd

