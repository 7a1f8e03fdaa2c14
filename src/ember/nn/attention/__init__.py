"""Functions and classes that alter the behavior of ``nn.functional.scaled_dot_product_attention``,
as ``torch.nn.attention``: ``sdpa_kernel`` chooses the backends it may use, and a registry of
flash-attention implementations for backend providers (ember's attention has one CPU
implementation, so none is registered)."""
import contextlib
import warnings

from ...backends.cuda import _sdp, can_use_efficient_attention, can_use_flash_attention
from ...backends.cuda._sdp import SDPBackend
from ._registry import (activate_flash_attention_impl, current_flash_attention_impl,
                        list_flash_attention_impls, register_flash_attention_impl,
                        restore_flash_attention_impl)

__all__ = ["SDPBackend", "sdpa_kernel", "WARN_FOR_UNFUSED_KERNELS",
           "register_flash_attention_impl", "activate_flash_attention_impl",
           "list_flash_attention_impls", "current_flash_attention_impl",
           "restore_flash_attention_impl"]

# If set to True, warn when the fused kernels cannot be run, with the reasons why.
WARN_FOR_UNFUSED_KERNELS = False


def _raise_kernel_warnings(params):
    """With ``WARN_FOR_UNFUSED_KERNELS``, warn for all the reasons why the fused kernels
    can't be run."""
    if WARN_FOR_UNFUSED_KERNELS:
        if not can_use_efficient_attention(params):
            warnings.warn("Efficient attention can't be used because:", stacklevel=2)
            can_use_efficient_attention(params, True)
        if not can_use_flash_attention(params):
            warnings.warn("Flash attention can't be used because:", stacklevel=2)
            can_use_flash_attention(params, True)


def _cur_sdpa_kernel_backends(with_priority=False):
    backends = [backend for name, backend in _sdp.BACKEND_OF.items() if _sdp.enabled[name]]
    if with_priority:
        backends.sort(key=lambda backend: _sdp.priority.index(int(backend)))
    return backends


def _sdpa_kernel(backends, set_priority=False):
    for name, backend in _sdp.BACKEND_OF.items():
        _sdp.enabled[name] = backend in backends
    if set_priority:
        user_priority = [int(backend) for backend in backends]
        for backend in _sdp.priority:
            if backend not in user_priority:
                user_priority.append(backend)
        _sdp.priority[:] = user_priority


@contextlib.contextmanager
def sdpa_kernel(backends, set_priority=False):
    """Context manager to select which backend to use for scaled dot product attention.

    Args:
        backends (Union[List[SDPBackend], SDPBackend]): A backend or list of backends for
            scaled dot product attention.
        set_priority (bool=False): Whether the ordering of the backends is interpreted as
            their priority order.

    Upon exiting the context manager, the previous state of the flags will be restored.
    ember's CPU attention runs when MATH or FLASH_ATTENTION is among them; with neither,
    ``scaled_dot_product_attention`` raises, as torch's does on the CPU."""
    if not isinstance(backends, (list, SDPBackend)):
        raise AssertionError("Backend must be an instance of SDPBackend or a list of SDPBackend "
                             f"instances, got {type(backends).__name__}")
    if isinstance(backends, SDPBackend):
        backends = [backends]
    backends = list(dict.fromkeys(backends))
    previous_backends = _cur_sdpa_kernel_backends(with_priority=set_priority)
    try:
        _sdpa_kernel(backends, set_priority)
        yield {}
    finally:
        _sdpa_kernel(previous_backends, set_priority)


for _fn in (register_flash_attention_impl, activate_flash_attention_impl,
            list_flash_attention_impls, current_flash_attention_impl,
            restore_flash_attention_impl):
    _fn.__module__ = __name__
del _fn
