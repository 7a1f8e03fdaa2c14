"""cuDNN's switches, as ``torch.backends.cudnn``. ember's CUDA kernels are CuPy's (cuBLAS and
CuPy's own); none of them calls cuDNN, so ``is_available()`` is False and ``version()`` None
everywhere. The switches keep torch's defaults and the values set on them, so that programs
which set them run unchanged."""
import contextlib
import sys
import warnings

from .. import ContextProp, PropModule, _allow_nonbracketed_mutation, _precision
from .._flags import check_bool
from ... import _dtype
from . import rnn

__all__ = ["is_available", "version", "is_acceptable", "set_flags", "flags", "CudnnModule",
           "CUDNN_TENSOR_DTYPES", "enabled", "benchmark", "benchmark_limit", "deterministic",
           "allow_tf32", "conv", "rnn", "fp32_precision", "depthwise_kernel"]

CUDNN_TENSOR_DTYPES = {_dtype.float16, _dtype.float32, _dtype.float64}
_DEPTHWISE_KERNELS = ("auto", "cudnn", "native")

_switches = {"enabled": True, "benchmark": False, "deterministic": False,
             "depthwise_kernel": "auto"}


def version():
    """Return the version of cuDNN (None: ember does not use cuDNN)."""
    return None


def is_available():
    """Return a bool indicating if CUDNN is currently available (ember never uses it)."""
    return False


def is_acceptable(tensor):
    """Whether cuDNN could run on ``tensor``: never in ember (warns, as torch does when it is
    built without cuDNN, for a CUDA tensor of a cuDNN dtype)."""
    if not _switches["enabled"]:
        return False
    if tensor.device.type != "cuda" or tensor.dtype not in CUDNN_TENSOR_DTYPES:
        return False
    warnings.warn("ember was built without cuDNN/MIOpen support: its CUDA kernels are CuPy's.",
                  stacklevel=2)
    return False


def _switch(name, setter_name):
    def get():
        return _switches[name]

    def set(value):
        _switches[name] = check_bool(value, setter_name)
    return get, set


def _get_allow_tf32():
    return _precision.get("cuda", "conv") == "tf32"


def _set_allow_tf32(value):
    precision = "tf32" if check_bool(value, "set_allow_tf32_cudnn") else "none"
    _precision.set("cuda", "conv", precision)
    _precision.set("cuda", "rnn", precision)


def _get_depthwise_kernel():
    return _switches["depthwise_kernel"]


def _set_depthwise_kernel(mode):
    if mode not in _DEPTHWISE_KERNELS:
        raise RuntimeError(f"Unknown cuDNN depthwise kernel mode: {mode}. Expected one of: "
                           + ", ".join(_DEPTHWISE_KERNELS))
    _switches["depthwise_kernel"] = mode


_ENABLED = _switch("enabled", "set_enabled_cudnn")
_BENCHMARK = _switch("benchmark", "set_benchmark_cudnn")
_DETERMINISTIC = _switch("deterministic", "set_deterministic_cudnn")


def set_flags(_enabled=None, _benchmark=None, _benchmark_limit=None, _deterministic=None,
              _allow_tf32=None, _fp32_precision="none", _depthwise_kernel=None):
    """Set the switches given (None leaves one as it is; ``_benchmark_limit`` applies only
    where cuDNN is available); returns the previous settings, in this order."""
    orig_flags = (_switches["enabled"], _switches["benchmark"], None, _switches["deterministic"],
                  _get_allow_tf32(), _precision.get("cuda", "all"), _switches["depthwise_kernel"])
    if _enabled is not None:
        _ENABLED[1](_enabled)
    if _benchmark is not None:
        _BENCHMARK[1](_benchmark)
    if _deterministic is not None:
        _DETERMINISTIC[1](_deterministic)
    if _allow_tf32 is not None:
        _set_allow_tf32(_allow_tf32)
    if _fp32_precision is not None:
        _precision.set("cuda", "all", _fp32_precision)
    if _depthwise_kernel is not None:
        _set_depthwise_kernel(_depthwise_kernel)
    return orig_flags


@contextlib.contextmanager
def flags(enabled=False, benchmark=False, benchmark_limit=10, deterministic=False,
          allow_tf32=True, fp32_precision="none", depthwise_kernel="auto"):
    """Within the block, set the switches to the given values; they are restored afterwards."""
    with _allow_nonbracketed_mutation():
        orig_flags = set_flags(enabled, benchmark, benchmark_limit, deterministic, allow_tf32,
                               fp32_precision, depthwise_kernel)
    try:
        yield
    finally:
        with _allow_nonbracketed_mutation():
            set_flags(*orig_flags)


class CudnnModule(PropModule):
    enabled = ContextProp(*_ENABLED)
    deterministic = ContextProp(*_DETERMINISTIC)
    benchmark = ContextProp(*_BENCHMARK)
    benchmark_limit = None  # a switch only where cuDNN is available
    allow_tf32 = ContextProp(_get_allow_tf32, _set_allow_tf32)
    conv = _precision.FP32Precision("cuda", "conv")
    fp32_precision = ContextProp(_precision.getter("cuda", "all"), _precision.setter("cuda", "all"))
    depthwise_kernel = ContextProp(_get_depthwise_kernel, _set_depthwise_kernel)


sys.modules[__name__] = CudnnModule(sys.modules[__name__], __name__)
