"""The autocast state and the decorator that gives an op its autocast policy.

An op decorated with ``@autocast_policy(policy)`` behaves as before unless autocast is on for
the device of its tensors in the calling thread. Then its floating-point tensor arguments
(float64 ones excepted, as in torch) are cast before it runs:

``"lower"``    to the autocast dtype (bfloat16 by default on CPU): matmuls, convolutions.
``"fp32"``     to float32: losses, most decompositions, some pooling and padding.
``"promote"``  to the widest floating dtype among them: cat, stack, index_copy.
``"native"``   not at all: ops that torch runs in its own kernel (so they keep their input
               dtype) but that ember composes of ops on the lists above.

The op body runs with autocast off, as torch's autocast kernels run the op below the autocast
layer: an op made of other listed ops (matmul of mm, linear of matmul) casts once. Calls with
``out=`` or an explicit ``dtype=`` are not eligible and run unchanged.

The disabled path reads one module global (how many threads have autocast on anywhere); only
while it is nonzero does an op look at its thread's state.
"""
import functools
import threading

from .. import _dtype
from .._tensor import Tensor

__all__ = ["autocast_policy", "POLICIES", "state", "set_enabled", "registered_policy"]

POLICIES = ("lower", "fp32", "promote", "native")

_DEFAULT_DTYPES = {"cpu": _dtype.bfloat16, "cuda": _dtype.float16}

_threads_enabled = 0       # how many (thread, device type) pairs have autocast on
_count_lock = threading.Lock()


class _State(threading.local):
    """One thread's autocast settings, per device type."""

    def __init__(self):
        self.enabled = {"cpu": False, "cuda": False}
        self.dtype = dict(_DEFAULT_DTYPES)
        self.cache_enabled = True
        self.nesting = 0


state = _State()


def set_enabled(device_type, enabled):
    """Turn autocast on or off for ``device_type`` in this thread, keeping the global count of
    threads with autocast on exact."""
    global _threads_enabled
    enabled = bool(enabled)
    if state.enabled[device_type] == enabled:
        return
    state.enabled[device_type] = enabled
    with _count_lock:
        _threads_enabled += 1 if enabled else -1


# ----------------------------------------------------------------------------------------
# Casting the arguments

def _is_eligible(value):
    """A floating tensor autocast may cast: not float64 (torch leaves doubles alone)."""
    if value.__class__ is not Tensor and not isinstance(value, Tensor):
        return False
    kind = value._data.dtype
    return (kind.kind == "f" or kind == _dtype.bfloat16.np) and kind != _dtype.float64.np


def _cast(value, dtype):
    if _is_eligible(value):
        return value if value._data.dtype == dtype.np else value.to(dtype)
    if value.__class__ in (list, tuple):
        return value.__class__(_cast(v, dtype) for v in value)
    return value


def _tensors(args, kwargs):
    """The tensor arguments, including those in list or tuple arguments (cat's, stack's)."""
    for value in (*args, *kwargs.values()):
        if value.__class__ in (list, tuple):
            yield from (v for v in value if isinstance(v, Tensor))
        elif isinstance(value, Tensor):
            yield value


def _widest(args, kwargs):
    """The widest floating dtype among the eligible tensors (promote's target)."""
    widest = None
    for t in _tensors(args, kwargs):
        if _is_eligible(t):
            dt = t.dtype
            if widest is None or (widest != dt and _dtype.promote_types(widest, dt) == dt):
                widest = dt
    return widest


def _target_dtype(policy, device_type, args, kwargs):
    if policy == "lower":
        return state.dtype[device_type]
    if policy == "fp32":
        return _dtype.float32
    if policy == "promote":
        return _widest(args, kwargs)
    return None


def _device_type(args, kwargs):
    for t in _tensors(args, kwargs):
        return t.device.type
    return None


def _run_autocast(fn, policy, only_if, args, kwargs):
    """The enabled path: cast the arguments by ``policy`` and run ``fn`` with autocast off."""
    device_type = _device_type(args, kwargs)
    if device_type is None or not state.enabled.get(device_type, False):
        return fn(*args, **kwargs)
    if kwargs.get("out") is not None or kwargs.get("dtype") is not None:
        return fn(*args, **kwargs)
    if only_if is None or only_if(*args, **kwargs):
        dtype = _target_dtype(policy, device_type, args, kwargs)
        if dtype is not None:
            args = tuple(_cast(a, dtype) for a in args)
            kwargs = {k: _cast(v, dtype) for k, v in kwargs.items()}
    state.enabled[device_type] = False  # the body runs below autocast; the global count stays
    try:
        return fn(*args, **kwargs)
    finally:
        state.enabled[device_type] = True


def autocast_policy(policy, only_if=None):
    """Decorate an op with its autocast policy (one of ``POLICIES``). ``only_if(*args,
    **kwargs)``, when given, says whether a call gets the policy's casts (``pad`` only casts
    for the reflect and replicate modes torch lists)."""
    if policy not in POLICIES:
        raise ValueError(f"unknown autocast policy {policy!r}; expected one of {POLICIES}")

    def decorate(fn):
        @functools.wraps(fn)
        def op(*args, **kwargs):
            if _threads_enabled:
                return _run_autocast(fn, policy, only_if, args, kwargs)
            return fn(*args, **kwargs)
        op.__autocast_policy__ = policy
        return op
    return decorate


def registered_policy(fn):
    """The autocast policy ``fn`` was decorated with, or None."""
    return getattr(fn, "__autocast_policy__", None)
