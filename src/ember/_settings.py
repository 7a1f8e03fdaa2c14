"""torch's top-level settings: deterministic algorithms, float32 matmul precision, inter-op
threads, warn-always, denormals, the default tensor type, anomaly mode and the deprecated
per-device autocast getters and setters, with the build constants (``has_lapack``, ...).

ember's kernels are deterministic (NumPy's, and oneDNN's in the cases ember takes), and its
float32 products never round to TF32 on the CPU, so the deterministic-algorithms and
matmul-precision settings are kept and reported as torch keeps them but change no result."""
import importlib.util
import os
import threading
import warnings

from . import _dtype
from ._backend.onednn.capi import library_paths
from ._memory_format import contiguous_format
from .amp.autocast_mode import (
    clear_autocast_cache, get_autocast_dtype, is_autocast_cache_enabled, is_autocast_enabled,
    set_autocast_cache_enabled, set_autocast_dtype, set_autocast_enabled,
)
from .autograd.anomaly_mode import (
    is_anomaly_check_nan_enabled, is_anomaly_enabled, set_anomaly_enabled,
)

__all__ = [
    "are_deterministic_algorithms_enabled", "autocast_decrement_nesting",
    "autocast_increment_nesting", "clear_autocast_cache", "get_autocast_cpu_dtype",
    "get_autocast_gpu_dtype", "get_deterministic_debug_mode", "get_float32_matmul_precision",
    "get_num_interop_threads", "has_lapack", "has_mkl", "has_openmp", "has_spectral",
    "is_anomaly_check_nan_enabled", "is_anomaly_enabled", "is_autocast_cache_enabled",
    "is_autocast_cpu_enabled", "is_deterministic_algorithms_warn_only_enabled",
    "is_warn_always_enabled", "legacy_contiguous_format", "set_anomaly_enabled",
    "set_autocast_cache_enabled", "set_autocast_cpu_dtype", "set_autocast_cpu_enabled",
    "set_autocast_dtype", "set_autocast_gpu_dtype", "set_default_tensor_type",
    "set_deterministic_debug_mode", "set_float32_matmul_precision", "set_flush_denormal",
    "set_num_interop_threads", "set_warn_always", "use_deterministic_algorithms",
]

has_lapack = True        # NumPy's LAPACK runs ember's decompositions
has_mkl = False          # ember calls no MKL routine
# ember's OpenMP threads are those of oneDNN's GNU OpenMP build, where its wheel is installed
has_openmp = any(os.path.exists(path) for path in library_paths()[:-1])
has_spectral = importlib.util.find_spec("ember.fft") is not None
legacy_contiguous_format = contiguous_format   # torch's is the same object


class _Settings:
    deterministic = False
    warn_only = False
    matmul_precision = "highest"
    interop_threads = 1
    warn_always = False


_settings = _Settings()


# -- deterministic algorithms -----------------------------------------------------------------

def _check_bool(value, function, argument, position=None):
    if not isinstance(value, bool):
        where = "" if position is None else f" (position {position})"
        raise TypeError(f"{function}(): argument '{argument}'{where} must be bool, not "
                        f"{type(value).__name__}")


def use_deterministic_algorithms(mode, *, warn_only=False):
    """Sets whether PyTorch operations must use "deterministic" algorithms (with
    ``warn_only``, nondeterministic ones warn instead of raising). ember's kernels are
    deterministic, so this is recorded and reported only."""
    _check_bool(mode, "_set_deterministic_algorithms", "mode", 1)
    _check_bool(warn_only, "_set_deterministic_algorithms", "warn_only")
    _settings.deterministic, _settings.warn_only = mode, warn_only


def are_deterministic_algorithms_enabled():
    """Returns True if the global deterministic flag is turned on."""
    return _settings.deterministic


def is_deterministic_algorithms_warn_only_enabled():
    """Returns True if the global deterministic flag is set to warn only."""
    return _settings.warn_only


_DEBUG_MODES = {"default": 0, "warn": 1, "error": 2}


def set_deterministic_debug_mode(debug_mode):
    """Sets the debug mode for deterministic operations: ``"default"`` (0), ``"warn"`` (1) or
    ``"error"`` (2)."""
    if isinstance(debug_mode, str):
        if debug_mode not in _DEBUG_MODES:
            raise RuntimeError("invalid value of debug_mode, expected one of `default`, `warn`, "
                               f"`error`, but got {debug_mode}")
        debug_mode = _DEBUG_MODES[debug_mode]
    elif not isinstance(debug_mode, int):
        raise TypeError(f"debug_mode must be str or int, but got {type(debug_mode)}")
    if debug_mode not in (0, 1, 2):
        raise RuntimeError(f"invalid value of debug_mode, expected 0, 1, or 2, but got "
                           f"{debug_mode}")
    use_deterministic_algorithms(debug_mode > 0, warn_only=debug_mode == 1)


def get_deterministic_debug_mode():
    """The current debug mode for deterministic operations: 0, 1 (warn) or 2 (error)."""
    if not _settings.deterministic:
        return 0
    return 1 if _settings.warn_only else 2


# -- precision, threads, warnings, denormals --------------------------------------------------

def set_float32_matmul_precision(precision):
    """Sets the internal precision of float32 matrix multiplications: ``"highest"``,
    ``"high"`` or ``"medium"``. ember's CPU products are always full float32."""
    if precision not in ("highest", "high", "medium"):
        warnings.warn(f"{precision} is not one of 'highest', 'high', or 'medium'; the current"
                      "setFloat32MatmulPrecision call has no effect.", UserWarning, stacklevel=2)
        return
    _settings.matmul_precision = precision


def get_float32_matmul_precision():
    """Returns the current value of float32 matrix multiplication precision."""
    return _settings.matmul_precision


def set_num_interop_threads(num):
    """Sets the number of threads used for inter-op parallelism (ember runs ops one at a
    time, so this is recorded only)."""
    if not isinstance(num, int) or num <= 0:
        raise RuntimeError("set_num_interop_threads expects a positive integer")
    _settings.interop_threads = num


def get_num_interop_threads():
    """Returns the number of threads used for inter-op parallelism."""
    return _settings.interop_threads


def set_warn_always(b):
    """When on, warnings torch gives once a process are given every time."""
    _settings.warn_always = bool(b)


def is_warn_always_enabled():
    """Returns True if the global warn_always flag is turned on."""
    return _settings.warn_always


def set_flush_denormal(mode):
    """Disables denormal floating numbers on the CPU where supported; returns whether it is.
    NumPy gives no control of the FPU's denormal flags, so ember returns False, as torch does
    on a CPU without the support."""
    return False


# -- the default tensor type ------------------------------------------------------------------

_DEFAULT_TYPES = {"FloatTensor": _dtype.float32, "DoubleTensor": _dtype.float64,
                  "HalfTensor": _dtype.float16, "BFloat16Tensor": _dtype.bfloat16}


def set_default_tensor_type(t, /):
    """Sets the default floating point tensor type (deprecated: use
    :func:`ember.set_default_dtype`): ``ember.FloatTensor``, ``ember.DoubleTensor`` or their
    names (``"torch.DoubleTensor"``)."""
    warnings.warn("torch.set_default_tensor_type() is deprecated as of PyTorch 2.1, please use "
                  "torch.set_default_dtype() and torch.set_default_device() as alternatives.",
                  UserWarning, stacklevel=2)
    name = t if isinstance(t, str) else getattr(t, "__name__", "")
    prefix, _, short = name.rpartition(".")
    if isinstance(t, str) and prefix not in ("torch", "ember"):
        raise TypeError(f"invalid type: '{t}'")
    if short not in _DEFAULT_TYPES:
        raise TypeError("only floating-point types are supported as the default type")
    _dtype.set_default_dtype(_DEFAULT_TYPES[short])


# -- the deprecated per-device autocast functions ---------------------------------------------

_autocast_nesting = threading.local()


def _deprecated(old, new):
    warnings.warn(f"torch.{old} is deprecated. Please use torch.{new} instead.",
                  DeprecationWarning, stacklevel=3)


def is_autocast_cpu_enabled():
    """Deprecated: ``is_autocast_enabled("cpu")``."""
    _deprecated("is_autocast_cpu_enabled()", "is_autocast_enabled('cpu')")
    return is_autocast_enabled("cpu")


def set_autocast_cpu_enabled(enabled):
    """Deprecated: ``set_autocast_enabled("cpu", enabled)``."""
    _deprecated("set_autocast_cpu_enabled(enabled)", "set_autocast_enabled('cpu', enabled)")
    set_autocast_enabled("cpu", enabled)


def get_autocast_cpu_dtype():
    """Deprecated: ``get_autocast_dtype("cpu")``."""
    _deprecated("get_autocast_cpu_dtype()", "get_autocast_dtype('cpu')")
    return get_autocast_dtype("cpu")


def set_autocast_cpu_dtype(dtype):
    """Deprecated: ``set_autocast_dtype("cpu", dtype)``."""
    _deprecated("set_autocast_cpu_dtype(dtype)", "set_autocast_dtype('cpu', dtype)")
    set_autocast_dtype("cpu", dtype)


def get_autocast_gpu_dtype():
    """Deprecated: ``get_autocast_dtype("cuda")``."""
    _deprecated("get_autocast_gpu_dtype()", "get_autocast_dtype('cuda')")
    return get_autocast_dtype("cuda")


def set_autocast_gpu_dtype(dtype):
    """Deprecated: ``set_autocast_dtype("cuda", dtype)``."""
    _deprecated("set_autocast_gpu_dtype(dtype)", "set_autocast_dtype('cuda', dtype)")
    set_autocast_dtype("cuda", dtype)


def autocast_increment_nesting():
    """Enters one more autocast region in this thread; returns the depth."""
    _autocast_nesting.depth = getattr(_autocast_nesting, "depth", 0) + 1
    return _autocast_nesting.depth


def autocast_decrement_nesting():
    """Leaves an autocast region in this thread; returns the depth (the cast cache, which
    ember does not keep, would be cleared at 0)."""
    _autocast_nesting.depth = getattr(_autocast_nesting, "depth", 0) - 1
    if _autocast_nesting.depth == 0:
        clear_autocast_cache()
    return _autocast_nesting.depth

